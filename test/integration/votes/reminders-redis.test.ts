import { Registry } from 'prom-client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { configSchema } from '../../../src/config/schema.js';
import { createRedisLeadership, type RedisLeadership } from '../../../src/leader/redis-lease.js';
import { silentLogger, type AgentLogger } from '../../../src/log/agent-logger.js';
import type { RedisConnection } from '../../../src/redis/connection.js';
import type { CapabilityContext } from '../../../src/runtime/capability.js';
import { createAgentMetrics } from '../../../src/runtime/metrics.js';
import { startReminders, type RunningReminders } from '../../../src/votes/reminders/configured.js';
import type { Vote, VotesEvents } from '../../../src/votes/types.js';
import { connectTestRedis, startTestRedis, type TestRedis } from '../../helpers/redis.js';
import { programPath } from '../../setup/provided.js';
import { voteAt } from '../../helpers/votes.js';

/*
 * Two agents on one real redis-server, each with its own connection, leadership and reminder
 * pipeline, one injected clock: reminders scheduled on the standby fire once, on the leader; after
 * the leader stops, the other agent leads and fires the rest; none twice, none lost.
 */

const HOUR = 3_600_000;
const MINUTE = 60_000;
const T0 = Date.parse('2025-01-01T12:00:00.000Z');
const PREFIX = 'reminders-test:';

const vote = (userId: string, createdMs: number) => voteAt(userId, createdMs, { road: 'webhook' });

describe.skipIf(!programPath('redis-server'))('vote reminders shared through Redis by two agents', () => {
  let redis: TestRedis;
  const stops: (() => Promise<void>)[] = [];
  beforeAll(async () => {
    redis = await startTestRedis();
  });
  afterEach(async () => {
    for (const stop of stops.splice(0).reverse()) await stop().catch(() => undefined);
    await redis.command('FLUSHALL');
  });
  afterAll(async () => {
    await redis?.close();
  });

  let time = T0;
  const fired: { agent: string; key: string; road: string }[] = [];
  const config = (maxLateness = '1h') =>
    configSchema.parse({ service: { token: 'a.b.c' }, state: { redis: { url: redis.url, lease: '2s' } }, votes: { reminders: { enabled: true, maxLateness } } });

  async function agent(
    name: string,
    options: { logger?: AgentLogger; maxLateness?: string } = {},
  ): Promise<{ name: string; leadership: RedisLeadership; running: RunningReminders; connection: RedisConnection; registry: Registry }> {
    const connection = await connectTestRedis(redis, PREFIX);
    stops.push(() => connection.close());
    const leadership = createRedisLeadership({ connection, agentId: name, leaseMs: 2_000 });
    leadership.start();
    stops.push(() => leadership.stop());
    const registry = new Registry();
    const listener = (reminder: Vote) => void fired.push({ agent: name, key: reminder.key, road: reminder.road });
    const context = {
      config: config(options.maxLateness),
      logger: options.logger ?? silentLogger,
      metrics: createAgentMetrics(registry),
      now: () => time,
      emit: () => undefined,
      reportError: () => undefined,
      listeners: (event: string) => (event === 'reminder' ? [listener] : []),
    } as unknown as CapabilityContext<VotesEvents>;
    const running = await startReminders(context, { kind: 'redis', redis: connection, agentId: name, leadership, lookMs: 20 });
    stops.push(() => running.stop(time + 1_000));
    return { name, leadership, running, connection, registry };
  }

  it('schedules on any agent, fires on the leader only, and the next leader fires the rest, each once', { timeout: 20_000 }, async () => {
    time = T0;
    fired.length = 0;
    const a = await agent('a');
    await expect.poll(() => a.leadership.isLeader).toBe(true);
    const b = await agent('b');
    await expect.poll(() => b.leadership.leaderId).toBe('a');

    // Scheduled through the standby: 1 and 2 due at T0 + 12 h (+1, +2 min), 3 and 4 an hour later.
    await b.running.reminders.schedule([vote('1', T0 + MINUTE), vote('2', T0 + 2 * MINUTE), vote('3', T0 + HOUR), vote('4', T0 + HOUR + MINUTE)]);
    // 4 votes again on the leader: its older reminder is superseded (the per-voter record is shared).
    await a.running.reminders.schedule([vote('4', T0 + HOUR + 5 * MINUTE)]);
    // An older vote of 1 arriving late (a replay) changes nothing.
    await a.running.reminders.schedule([vote('1', T0)]);
    expect(await b.running.reminders.size()).toBe(4);
    expect((await a.running.reminders.next(2)).map((r) => r.userId)).toEqual(['1', '2']);

    time = T0 + 12 * HOUR + 3 * MINUTE;
    await expect.poll(() => fired.length).toBe(2);
    expect(fired).toEqual([
      { agent: 'a', key: `reminder:1:${T0 + MINUTE}`, road: 'webhook' },
      { agent: 'a', key: `reminder:2:${T0 + 2 * MINUTE}`, road: 'webhook' },
    ]);
    // The hooks are called before the fired reminders are removed and noted as sent: wait for that write.
    await expect.poll(async () => (await b.running.reminders.lastSent()).map((r) => r.userId).sort()).toEqual(['1', '2']);

    // The leader stops (releasing its lease): b leads, and fires the rest when due.
    await a.running.stop(time + 1_000);
    await a.leadership.stop();
    await expect.poll(() => b.leadership.isLeader, { timeout: 5_000 }).toBe(true);
    time = T0 + 13 * HOUR + 10 * MINUTE;
    await expect.poll(() => fired.length).toBe(4);
    // A little longer: a repeat would show now.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(fired.slice(2).sort((x, y) => x.key.localeCompare(y.key))).toEqual([
      { agent: 'b', key: `reminder:3:${T0 + HOUR}`, road: 'webhook' },
      { agent: 'b', key: `reminder:4:${T0 + HOUR + 5 * MINUTE}`, road: 'webhook' },
    ]);
    await expect.poll(() => b.running.reminders.size()).toBe(0);
    const metricsA = await a.registry.metrics();
    const metricsB = await b.registry.metrics();
    expect(metricsA).toContain('listing_agent_reminders_total{result="sent"} 2');
    expect(metricsB).toContain('listing_agent_reminders_total{result="sent"} 2');
    expect(metricsB).toContain('listing_agent_reminders_total{result="scheduled"} 4');
  });

  it('a reminder handed to the ledger but still scheduled (the leader died between the two) is not fired again', { timeout: 20_000 }, async () => {
    time = T0;
    fired.length = 0;
    const a = await agent('a');
    await expect.poll(() => a.leadership.isLeader).toBe(true);
    await a.running.reminders.schedule([vote('9', T0)]);
    time = T0 + 12 * HOUR + MINUTE;
    await expect.poll(() => fired.length).toBe(1);
    // Put the fired reminder back in the schedule, as if the leader had died before removing it.
    const line = `8\t9\t${T0}\t${T0 + 12 * HOUR}\t\t1\twebhook`;
    await redis.command('HSET', `${PREFIX}reminders:schedule`, '8\t9', line);
    await redis.command('ZADD', `${PREFIX}reminders:due`, String(T0 + 12 * HOUR), '8\t9');
    await a.running.reminders.fire();
    await a.running.pipeline.idle();
    expect(await a.running.reminders.size()).toBe(0);
    expect(fired).toHaveLength(1);
  });

  it('logs the reminders skipped as late once per start with the count (every batch), later ones in one summary per 10 min', { timeout: 20_000 }, async () => {
    time = T0;
    fired.length = 0;
    const warnings: Record<string, unknown>[] = [];
    const logger: AgentLogger = { ...silentLogger, warn: (obj) => void warnings.push(obj as Record<string, unknown>), child: () => logger };
    const a = await agent('a', { logger, maxLateness: '1m' });
    await expect.poll(() => a.leadership.isLeader).toBe(true);
    // More than one round trip takes (500): all due at T0 + 12 h.
    await a.running.reminders.schedule(Array.from({ length: 1_200 }, (_, i) => vote(`u${i}`, T0)));
    time = T0 + 14 * HOUR;
    await expect.poll(() => a.running.reminders.size(), { timeout: 5_000 }).toBe(0);
    await a.running.reminders.fire();
    const skippedLines = () => warnings.filter((w) => w.skipped !== undefined);
    expect(skippedLines()).toEqual([expect.objectContaining({ skipped: 1_200 })]);

    // Ten more skipped 3 min later: counted, no line of their own until 10 min after the first.
    await a.running.reminders.schedule(Array.from({ length: 10 }, (_, i) => vote(`v${i}`, T0 + 2 * HOUR + MINUTE)));
    time = T0 + 14 * HOUR + 3 * MINUTE;
    await expect.poll(() => a.running.reminders.size(), { timeout: 5_000 }).toBe(0);
    await a.running.reminders.fire();
    expect(skippedLines()).toHaveLength(1);
    time = T0 + 14 * HOUR + 10 * MINUTE;
    await expect.poll(() => skippedLines().length, { timeout: 5_000 }).toBe(2);
    expect(skippedLines()[1]).toMatchObject({ skipped: 10, sinceMs: 10 * MINUTE });
    expect(fired).toEqual([]);
    expect(await a.registry.metrics()).toContain('listing_agent_reminders_total{result="skipped"} 1210');
  });
});
