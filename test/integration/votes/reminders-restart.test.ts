import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { startReceiver } from '../../helpers/receiver.js';
import { verifySignature } from '../../helpers/verify-signature.js';
import { configSchema } from '../../../src/config/schema.js';
import { silentLogger, type AgentLogger } from '../../../src/log/agent-logger.js';
import type { CapabilityContext } from '../../../src/runtime/capability.js';
import { createAgentMetrics } from '../../../src/runtime/metrics.js';
import { startReminders } from '../../../src/votes/reminders/configured.js';
import { readFileReminders } from '../../../src/votes/reminders/read.js';
import type { Vote, VotesEvents } from '../../../src/votes/types.js';

const HOUR = 3_600_000;
const T0 = Date.parse('2025-01-01T12:00:00.000Z');
const SECRET = 'whs_reminder_secret_1234';
const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

const vote = (userId: string, createdMs: number): Vote => ({
  key: `${userId}:${createdMs}`,
  userId,
  platformId: `2109876543210987${userId}`,
  projectId: '8',
  weight: 1,
  createdAt: new Date(createdMs).toISOString(),
  expiresAt: new Date(createdMs + 12 * HOUR).toISOString(),
  road: 'webhook',
});

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
