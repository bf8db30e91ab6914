import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configSchema } from '../../../src/config/schema.js';
import { silentLogger } from '../../../src/log/agent-logger.js';
import type { RedisConnection } from '../../../src/redis/connection.js';
import type { CapabilityContext } from '../../../src/runtime/capability.js';
import { createAgentMetrics } from '../../../src/runtime/metrics.js';
import { startReminders } from '../../../src/votes/reminders/configured.js';
import type { VotesEvents } from '../../../src/votes/types.js';
import { runCliInProcess } from '../../helpers/cli.js';
import { connectTestRedis, startTestRedis, type TestRedis } from '../../helpers/redis.js';
import { programPath } from '../../setup/provided.js';
import { voteAt } from '../../helpers/votes.js';

/*
 * `listing-agent votes reminders` against what a real reminder schedule wrote: the state
 * directory's journals (read beside the agent, without its lock) and the shared schedule in a
 * real redis-server.
 */

const HOUR = 3_600_000;
const MINUTE = 60_000;

const vote = (userId: string, createdMs: number) => voteAt(userId, createdMs);

/** Reminders as the agent runs them (file or Redis), on an injected clock; `advance` moves it and fires. */
async function runningReminders(rawConfig: Record<string, unknown>, options: { directory?: string; redis?: RedisConnection }) {
  let time = Date.now();
  const context = {
    config: configSchema.parse(rawConfig),
    logger: silentLogger,
    metrics: createAgentMetrics(new Registry()),
    now: () => time,
    emit: () => undefined,
    reportError: () => undefined,
    listeners: (event: string) => (event === 'reminder' ? [() => undefined] : []),
  } as unknown as CapabilityContext<VotesEvents>;
  const running = await startReminders(
    context,
    options.redis ? { kind: 'redis', redis: options.redis, agentId: 'agent-a', lookMs: 60_000 } : { kind: 'file', directory: options.directory!, lookMs: 60_000 },
  );
  return {
    start: time,
    running,
    async advance(ms: number) {
      time += ms;
      await running.reminders.fire();
    },
    stop: () => running.stop(time + 1_000),
  };
}

async function folder(config: Record<string, unknown>) {
  const cwd = await mkdtemp(join(tmpdir(), 'la-reminders-cli-'));
  await writeFile(join(cwd, 'agent.json'), JSON.stringify(config));
  const cli = (...args: string[]) => runCliInProcess(['votes', 'reminders', ...args, '--config', 'agent.json'], { cwd, env: {} });
  return { cwd, cli };
}

describe('listing-agent votes reminders', () => {
  it('says plainly when reminders are off (text and JSON), and reads nothing', async () => {
    const t = await folder({ service: { token: 'a.b.c' }, state: { directory: './state' } });
    const text = await t.cli();
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('Vote reminders are not enabled (votes.reminders.enabled is false)');
    const json = await t.cli('--json');
    expect(JSON.parse(json.stdout)).toEqual({ enabled: false, reason: 'votes.reminders.enabled is false' });
    const votesOff = await folder({ service: { token: 'a.b.c' }, votes: { enabled: false, reminders: { enabled: true } } });
    expect((await votesOff.cli()).stdout).toContain('(votes.enabled and webhooks.enabled are both false; reminders come from their votes)');
  });

  it('lists the next due, the count and the last sent from the journals a running schedule wrote, beside it', async () => {
    const config = { service: { token: 'a.b.c' }, state: { directory: './state' }, votes: { enabled: true, reminders: { enabled: true, delay: '5m' } } };
    const t = await folder(config);
    const none = await t.cli();
    expect(none.code).toBe(0);
    expect(none.stdout).toContain('No reminder schedule in');

    const agent = await runningReminders(config, { directory: join(t.cwd, 'state') });
    try {
      const t0 = agent.start;
      // alice's second vote supersedes her first; bob votes later; carol's is the soonest.
      await agent.running.reminders.schedule([vote('alice', t0 - 2 * HOUR), vote('bob', t0 - HOUR), vote('carol', t0 - 3 * HOUR), vote('alice', t0 - 90 * MINUTE)]);
      // Past carol's expiry + delay: hers is sent; the others stay.
      await agent.advance(9 * HOUR + 10 * MINUTE);
      expect(await agent.running.reminders.size()).toBe(2);

      const text = await t.cli();
      expect(text.stderr).toBe('');
      expect(text.code).toBe(0);
      expect(text.stdout).toContain(`2 vote reminders scheduled in ${join(t.cwd, 'state', 'reminders.journal')}; each is due at its vote's expiry + 5m (votes.reminders.delay).`);
      const lines = text.stdout.split('\n');
      const next = lines.slice(lines.indexOf('Next due:') + 2, lines.indexOf('Next due:') + 4);
      expect(next.map((line) => line.split(/\s+/)[1])).toEqual(['alice', 'bob']);
      expect(next[0]).toContain(new Date(t0 - 90 * MINUTE + 12 * HOUR + 5 * MINUTE).toISOString());
      expect(next[0]).toContain(`alice:${t0 - 90 * MINUTE}`);
      expect(text.stdout).toMatch(/Last sent \(newest first\):\n.*\n\S+\s+carol\s+8\s+carol:\d+/);

      const json = JSON.parse((await t.cli('--json', '--limit', '1')).stdout);
      expect(json).toMatchObject({ enabled: true, scheduled: 2, delayMs: 5 * MINUTE });
      expect(json.next).toEqual([
        {
          voteKey: `alice:${t0 - 90 * MINUTE}`,
          userId: 'alice',
          platformId: null,
          projectId: '8',
          expiresAt: new Date(t0 - 90 * MINUTE + 12 * HOUR).toISOString(),
          dueAt: new Date(t0 - 90 * MINUTE + 12 * HOUR + 5 * MINUTE).toISOString(),
        },
      ]);
      expect(json.lastSent.map((r: { userId: string }) => r.userId)).toEqual(['carol']);
    } finally {
      await agent.stop();
    }
  });

  it('refuses a bad --limit as a usage error', async () => {
    const t = await folder({ service: { token: 'a.b.c' }, votes: { reminders: { enabled: true } } });
    const bad = await t.cli('--limit', '0');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--limit must be a whole number from 1 to 1000');
  });
});

describe.skipIf(!programPath('redis-server'))('listing-agent votes reminders on state.redis', () => {
  let redis: TestRedis;
  beforeAll(async () => {
    redis = await startTestRedis();
  });
  afterAll(async () => {
    await redis?.close();
  });

  it('reads the shared schedule and the last sent from Redis, writing nothing', async () => {
    const prefix = 'reminders-cli:';
    const config = { service: { token: 'a.b.c' }, state: { directory: './state', redis: { url: redis.url, prefix } }, votes: { enabled: true, reminders: { enabled: true } } };
    const t = await folder(config);
    const connection = await connectTestRedis(redis, prefix);
    const agent = await runningReminders(config, { redis: connection });
    try {
      const t0 = agent.start;
      await agent.running.reminders.schedule([vote('dave', t0 - 3 * HOUR), vote('erin', t0 - HOUR)]);
      await agent.advance(9 * HOUR + MINUTE);
      const before = await redis.command('DBSIZE');
      const json = JSON.parse((await t.cli('--json')).stdout);
      expect(json).toMatchObject({ enabled: true, scheduled: 1, where: `redis ${redis.url} (prefix ${prefix})` });
      expect(json.next.map((r: { userId: string }) => r.userId)).toEqual(['erin']);
      expect(json.lastSent.map((r: { userId: string }) => r.userId)).toEqual(['dave']);
      expect(await redis.command('DBSIZE')).toBe(before);
      const text = await t.cli();
      expect(text.stdout).toContain(`1 vote reminder scheduled in redis ${redis.url} (prefix ${prefix})`);
    } finally {
      await agent.stop();
      await connection.close();
    }
  });
});
