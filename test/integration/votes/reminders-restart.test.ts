import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import type { StatusDocument } from '../../../src/status/document.js';
import { setupBot, startTestEmulator } from '../../helpers/emulator.js';
import { call } from '../../helpers/http.js';
import { startReceiver } from '../../helpers/receiver.js';
import { freePort, sleep, tempDir, waitFor, webhooksFor } from '../agent/redis-fixture.js';
import { readyz, startDaemon, type Daemon } from '../leader/daemons.js';
import { verifySignature } from '../../helpers/verify-signature.js';
import { configSchema } from '../../../src/config/schema.js';
import { silentLogger, type AgentLogger } from '../../../src/log/agent-logger.js';
import type { CapabilityContext } from '../../../src/runtime/capability.js';
import { createAgentMetrics } from '../../../src/runtime/metrics.js';
import { startReminders } from '../../../src/votes/reminders/configured.js';
import { readFileReminders } from '../../../src/votes/reminders/read.js';
import { voteKey, type VotesEvents } from '../../../src/votes/types.js';
import { voteAt } from '../../helpers/votes.js';

const HOUR = 3_600_000;
const T0 = Date.parse('2025-01-01T12:00:00.000Z');
const SECRET = 'whs_reminder_secret_1234';
const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

const vote = (userId: string, createdMs: number) => voteAt(userId, createdMs, { platformId: `2109876543210987${userId}`, road: 'webhook' });

describe('vote reminders across restarts (file journal and ledger, a signed http hook)', () => {
  it('fires at the next start what came due while down, skips what is later than maxLateness, and never twice', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'reminders-'));
    dirs.push(directory);
    const receiver = await startReceiver(() => ({ status: 200 }));
    const config = configSchema.parse({
      service: { token: 'a.b.c' },
      state: { directory },
      votes: { reminders: { enabled: true, hooks: [{ name: 'dm', url: receiver.url, secret: SECRET }] } },
    });
    let time = T0;
    const warnings: unknown[] = [];
    const logger: AgentLogger = { ...silentLogger, warn: (obj) => void warnings.push(obj), child: () => logger };
    const registry = new Registry();
    const metrics = createAgentMetrics(registry);
    const context = { config, logger, metrics, now: () => time, emit: () => undefined, reportError: () => undefined } as unknown as CapabilityContext<VotesEvents>;

    const first = await startReminders(context, { kind: 'file' });
    // 1 is superseded by its own newer vote; 2 will be 30 min late at the restart; 3 three hours late.
    await first.reminders.schedule([vote('1', T0 - 11 * HOUR), vote('2', T0 - 30 * 60_000), vote('3', T0 - 3 * HOUR)]);
    await first.reminders.schedule([vote('1', T0)]);
    await first.stop(time);
    expect(receiver.requests).toHaveLength(0);

    time = T0 + 12 * HOUR; // down until after 2, 3 and 1 came due
    const second = await startReminders(context, { kind: 'file' });
    await second.pipeline.idle();
    const bodies = receiver.requests.map((request) => request.json as { type: string; key: string; vote: { user_id: string } });
    expect(bodies.map((body) => [body.type, body.vote.user_id]).sort()).toEqual([
      ['reminder', '1'],
      ['reminder', '2'],
    ]);
    const forTwo = receiver.requests.find((request) => (request.json as { vote: { user_id: string } }).vote.user_id === '2')!;
    expect(forTwo.headers['idempotency-key']).toBe(`reminder:2:${T0 - 30 * 60_000}`);
    expect(verifySignature(forTwo, SECRET).valid).toBe(true);
    // The reminded vote's own road, not the road the reminder pipeline was fed on.
    expect((forTwo.json as { vote: { road: string } }).vote.road).toBe('webhook');
    expect(warnings.filter((w) => (w as { skipped?: number }).skipped !== undefined)).toEqual([expect.objectContaining({ skipped: 1 })]);
    await second.stop(time);

    time += 2 * HOUR;
    const third = await startReminders(context, { kind: 'file' });
    await third.pipeline.idle();
    expect(receiver.requests).toHaveLength(2);
    expect(await third.reminders.size()).toBe(0);
    await third.stop(time);
    // Nothing left scheduled on disk either (the schedule rides the reminder ledger's journal here).
    expect((await readFileReminders(directory, 0)).size).toBe(0);
    const text = await registry.metrics();
    expect(text).toContain('listing_agent_reminders_total{result="scheduled"} 4');
    // Per reminder, not per hook call (each went to the reminder event's hook and to dm).
    expect(text).toContain('listing_agent_reminders_total{result="sent"} 2');
    expect(text).toContain('listing_agent_reminders_total{result="skipped"} 2');
  });
});

/** The value of `listing_agent_reminders_total{result}` on a daemon's /metrics (0 when absent). */
async function reminderCount(daemon: Daemon, result: string): Promise<number> {
  const text = (await call(`${daemon.health}/metrics`).catch(() => undefined))?.text ?? '';
  const line = text.split('\n').find((l) => l.startsWith(`listing_agent_reminders_total{result="${result}"} `));
  return line === undefined ? 0 : Number(line.split(' ').pop());
}

const reminderLines = async (file: string) => (await readFile(file, 'utf8').catch(() => '')).split('\n').filter((line) => line !== '');

describe('vote reminders across a SIGKILL and restarts (`listing-agent run`, file state)', () => {
  /*
   * The daemon's clock is the real one: the emulator's votes live 7 s, and maxLateness is 5 s.
   * B is due 1.5 s after it is cast, A 5.5 s after B; the daemon is SIGKILLed before either is
   * due and started again just after A is due: A is 0.1 s plus a start late (sent), B 5.6 s plus
   * a start (skipped), whatever the start takes up to 4.9 s.
   */
  const LIFETIME_MS = 7_000;
  const B_DUE_IN_MS = 1_500;

  it('a reminder due while down fires once at the next start, one later than maxLateness is counted skipped; the last sent survives a restart', { timeout: 60_000 }, async () => {
    const emu = await startTestEmulator({ settings: { allowHttpLoopback: true, voteExpirySeconds: LIFETIME_MS / 1_000 } });
    const fx = setupBot(emu);
    const dir = await tempDir('la-reminders-kill-');
    const file = join(dir, 'reminders.txt');
    const { ports, secrets } = await webhooksFor(emu, fx, 1);
    const healthPort = await freePort();
    const config = (run: number) => ({
      service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 },
      state: { directory: './state' },
      votes: {
        enabled: true,
        pollInterval: '5s',
        // The rewards go to a hook that does nothing: this test watches the reminders.
        hooks: [{ type: 'exec', name: 'reward', command: ['/bin/sh', '-c', 'true'] }],
        reminders: {
          enabled: true,
          maxLateness: '5s',
          // Each reminder as a line `<type> <idempotency key> r<run>`: which run sent it.
          hooks: [{ type: 'exec', name: 'dm', command: ['/bin/sh', '-c', `echo "$LISTING_HOOK_TYPE $LISTING_VOTE_KEY r${run}" >> '${file}'`] }],
        },
      },
      webhooks: { enabled: true, listen: `127.0.0.1:${ports[0]}`, secrets },
    });

    const first = await startDaemon('agent', dir, healthPort, config(1));
    await waitFor('the agent ready', async () => (await readyz(first))?.status === 200, 20_000, 50);
    const castAt = Date.now();
    const [userA, userB] = [emu.admin.createUser({ username: 'alice' }), emu.admin.createUser({ username: 'bob' })];
    const b = emu.admin.castVote({ project_id: fx.projectId, user_id: userB.id, created_at: new Date(castAt - LIFETIME_MS + B_DUE_IN_MS).toISOString() });
    const a = emu.admin.castVote({ project_id: fx.projectId, user_id: userA.id, created_at: new Date(castAt).toISOString() });
    const [dueB, dueA] = [Date.parse(b.expires_at), Date.parse(a.expires_at)];
    // Both scheduled (the metric counts a reminder once its journal line is on disk), then the kill, before either is due.
    await waitFor('both reminders scheduled', async () => (await reminderCount(first, 'scheduled')) === 2, 5_000, 20);
    first.child.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');
    expect(Date.now()).toBeLessThan(dueB);
    expect(await reminderLines(file)).toEqual([]);

    // Down until A is due: A fires at the start, B (5.5 s older) is skipped.
    await sleep(dueA + 100 - Date.now());
    const startedAt = Date.now();
    const second = await startDaemon('agent', dir, healthPort, config(2));
    await waitFor('the reminder due while down', async () => (await reminderLines(file)).length >= 1, 15_000, 20);
    const firedAfterMs = Date.now() - startedAt;
    const keyA = `reminder:${voteKey(a.user_id, a.created_at)}`;
    expect(await reminderLines(file)).toEqual([`reminder ${keyA} r2`]);
    await waitFor('A counted sent', async () => (await reminderCount(second, 'sent')) === 1, 5_000, 20);
    expect(await reminderCount(second, 'skipped')).toBe(1);
    const skippedLines = second.lines().filter((line) => line.skipped !== undefined);
    expect(skippedLines).toEqual([expect.objectContaining({ level: 'warn', skipped: 1 })]);
    // The page's count is unknown (null) until the reminders' start, which fired A, is over.
    await waitFor('the agent ready', async () => (await readyz(second))?.status === 200, 20_000, 50);
    let status = (await call<StatusDocument>(`${second.health}/status.json`)).body.votes.reminders;
    expect(status).toMatchObject({ enabled: true, scheduled: 0, next: [] });
    expect(status.lastSent.map((r) => r.voteKey)).toEqual([voteKey(a.user_id, a.created_at)]);
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);

    // Started again: nothing fires twice, and the page still lists the last reminder sent.
    const third = await startDaemon('agent', dir, healthPort, config(3));
    await waitFor('the agent ready again', async () => (await readyz(third))?.status === 200, 20_000, 50);
    status = (await call<StatusDocument>(`${third.health}/status.json`)).body.votes.reminders;
    expect(status.lastSent.map((r) => r.voteKey)).toEqual([voteKey(a.user_id, a.created_at)]);
    expect(status.lastSent[0]).toMatchObject({ userId: a.user_id, dueAt: new Date(dueA).toISOString() });
    await sleep(300);
    expect(await reminderLines(file)).toEqual([`reminder ${keyA} r2`]);
    third.child.kill('SIGTERM');
    expect(await third.exited).toBe(0);
    console.log(`reminders restart: A sent ${firedAfterMs} ms after the restart began (${startedAt - dueA} ms after it was due); B, due ${dueA - dueB} ms before A, skipped (maxLateness 5 s)`);
  });
});
