import { once } from 'node:events';
import { Client, Events, GatewayIntentBits } from 'discord.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createRedisConnection, type RedisConnection } from '../../../src/redis/connection.js';
import { createRedisShardsSource, createShardReporter, type ShardReporter } from '../../../src/stats/sources/redis-shards.js';
import { ownShardsSourceFor } from '../../../src/stats/sources/redis-shards-local.js';
import type { OwnShardsReading, OwnShardsSource } from '../../../src/stats/sources/redis-shards-reports.js';
import { startFakeDiscord } from '../../helpers/fake-discord/index.js';
import { connectTestRedis, startTestRedis, type TestRedis } from '../../helpers/redis.js';
import { programPath } from '../../setup/provided.js';
import { startTsChild } from '../../helpers/ts-child.js';
import { parseConfig } from '../../../src/agent/agent.js';
import { createStatsPoster } from '../../../src/stats/poster.js';
import { createManualScheduler } from '../../helpers/manual-scheduler.js';
import { createMemoryStore } from '../../../src/store/memory.js';
import { clientFor, createFakeClock } from '../../helpers/client.js';
import { setupBot, startTestEmulator } from '../../helpers/emulator.js';

const PREFIX = 'shards-test:';

/** A process's shards as a test sets them. */
function ownShards(shardCount: number, counts: Record<number, number>): OwnShardsSource & { set(counts: Record<number, number> | string): void } {
  let reading: OwnShardsReading = { ready: true, shardCount, shards: new Map() };
  const source = {
    description: 'test shards',
    read: async () => ({ ready: false as const, reason: 'not the whole bot' }),
    readOwnShards: async () => reading,
    set(next: Record<number, number> | string) {
      reading = typeof next === 'string' ? { ready: false, reason: next } : { ready: true, shardCount, shards: new Map(Object.entries(next).map(([id, n]) => [Number(id), n])) };
    },
  };
  source.set(counts);
  return source;
}

describe.skipIf(!programPath('redis-server'))('shard aggregation on Redis', () => {
  let redis: TestRedis;
  let connection: RedisConnection;
  const reporters: ShardReporter[] = [];

  beforeAll(async () => {
    redis = await startTestRedis();
    connection = await connectTestRedis(redis, PREFIX);
  });
  beforeEach(async () => {
    await Promise.all(reporters.splice(0).map((reporter) => reporter.stop()));
    await redis.command('FLUSHALL');
  });
  afterAll(async () => {
    await Promise.all(reporters.map((reporter) => reporter.stop()));
    await connection?.close();
    await redis?.close();
  });

  it('adds up several reporters, names the missing shards, and forgets a stopped one only when its reports expire', async () => {
    const sources = [ownShards(16, { 0: 1, 1: 2, 2: 3 }), ownShards(16, { 8: 1, 9: 1, 10: 1, 11: 1 }), ownShards(16, { 13: 5, 14: 5, 15: 5 })];
    const started = sources.map((source) => createShardReporter({ connection, source, everyMs: 60_000, ttlMs: 800 }));
    reporters.push(...started);
    expect(await Promise.all(started.map((reporter) => reporter.reportNow()))).toEqual([[0, 1, 2], [8, 9, 10, 11], [13, 14, 15]]);

    const source = createRedisShardsSource({ connection, staleAfterMs: 800 });
    expect(await source.read()).toEqual({ ready: false, reason: expect.stringContaining('no report from shards 3-7, 12') });

    const fourth = ownShards(16, { 3: 1, 4: 1, 5: 1, 6: 1, 7: 1, 12: 1 });
    const last = createShardReporter({ connection, source: fourth, everyMs: 100, ttlMs: 800 });
    reporters.push(last);
    expect(await last.reportNow()).toEqual([3, 4, 5, 6, 7, 12]);
    expect(await source.read()).toEqual({ ready: true, serverCount: 31, shardCount: 16, shards: [1, 2, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 5, 5, 5] });

    // The stored form, as an operator would read it.
    const stored = JSON.parse(await connection.client.get(`${PREFIX}shards:12`) as string);
    expect(stored).toMatchObject({ shard_id: 12, shard_count: 16, server_count: 1, process: expect.any(String), reportedAt: expect.any(Number) });
    expect(await connection.client.zRange(`${PREFIX}shards:index`, 0, -1)).toHaveLength(16);

    // Stopping leaves the reports in place (a restart must not make the total drop)...
    await started[0]!.stop();
    expect((await source.read()).ready).toBe(true);
    // ...until they expire; the others keep theirs fresh.
    last.start();
    await Promise.all(started.slice(1).map((reporter) => reporter.reportNow()));
    await vi.waitFor(async () => expect(await source.read()).toEqual({ ready: false, reason: expect.stringContaining('no report from shards 0-2') }), { timeout: 3_000, interval: 50 });
    await last.stop();
  });

  it('a reporter stopped during a round and started again runs one round at a time, not two chains', async () => {
    const own = ownShards(1, { 0: 7 });
    let reads = 0;
    let hold: (() => void) | undefined;
    const slow = {
      ...own,
      readOwnShards: async () => {
        reads += 1;
        if (reads === 1) await new Promise<void>((resolve) => (hold = resolve));
        return own.readOwnShards();
      },
    };
    const reporter = createShardReporter({ connection, source: slow, everyMs: 100, ttlMs: 5_000 });
    reporters.push(reporter);
    reporter.start();
    await vi.waitFor(() => expect(hold).toBeDefined());
    // Stopped while its first round waits for the counts, started again, and only then that round ends.
    const stopping = reporter.stop();
    reporter.start();
    hold!();
    await stopping;
    const from = reads;
    await new Promise((resolve) => setTimeout(resolve, 600));
    // One chain: a round, then 100 ms, then the next; at most 7 in 600 ms (two chains would make about twice that).
    expect(reads - from).toBeGreaterThanOrEqual(2);
    expect(reads - from).toBeLessThanOrEqual(7);
    await reporter.stop();
    expect(JSON.parse((await connection.client.get(`${PREFIX}shards:0`)) as string)).toMatchObject({ server_count: 7 });
  });

  it('writes nothing while the counts are not ready, and waits for the configured shard count', async () => {
    const own = ownShards(2, { 0: 4, 1: 6 });
    own.set('the Client is not ready yet');
    const reporter = createShardReporter({ connection, source: own, everyMs: 60_000, ttlMs: 5_000 });
    reporters.push(reporter);
    expect(await reporter.reportNow()).toEqual([]);
    expect(await redis.command('EXISTS', `${PREFIX}shards:0`)).toBe(':0');
    own.set({ 0: 4, 1: 6 });
    expect(await reporter.reportNow()).toEqual([0, 1]);
    expect(await createRedisShardsSource({ connection, staleAfterMs: 5_000 }).read()).toMatchObject({ ready: true, serverCount: 10 });
    expect(await createRedisShardsSource({ connection, staleAfterMs: 5_000, shardCount: 3 }).read()).toEqual({ ready: false, reason: expect.stringContaining('stats.redis.shardCount is 3') });
  });

  it('reads as not ready, never throws, while Redis is down; the reporter rejects with a Redis error', async () => {
    const lonely = createRedisConnection({ url: 'redis://127.0.0.1:1', prefix: PREFIX, connectTimeoutMs: 200 });
    const reading = await createRedisShardsSource({ connection: lonely, staleAfterMs: 1_000 }).read();
    expect(reading).toEqual({ ready: false, reason: expect.stringContaining('could not read the shard reports') });
    const reporter = createShardReporter({ connection: lonely, source: ownShards(1, { 0: 1 }), everyMs: 1_000, ttlMs: 1_000 });
    await expect(reporter.reportNow()).rejects.toMatchObject({ code: 'redis_unavailable' });
    await lonely.close();
  });

  it('bot processes, each a discord.js Client on some shards, report sums equal to the fake Discord\'s guilds', async () => {
    const fake = await startFakeDiscord({ shardCount: 4, guilds: 11 });
    // Two child processes, and this process as a third: a Client on shard 3 with its own reporter.
    const children = [[0], [1, 2]].map((shards) => startTsChild('redis-shard-process.ts', [fake.restUrl, fake.token, shards.join(','), '4', redis.url, PREFIX]));
    const client = new Client({
      intents: [GatewayIntentBits.Guilds],
      shards: [3],
      shardCount: 4,
      rest: { api: fake.restUrl },
      ws: { buildIdentifyThrottler: () => ({ waitForIdentify: async () => undefined }) },
    });
    try {
      const ready = once(client, Events.ClientReady);
      await client.login(fake.token);
      await ready;
      const own = createShardReporter({ connection, source: ownShardsSourceFor(client), everyMs: 200, ttlMs: 1_500 });
      reporters.push(own);
      own.start();
      await Promise.all(children.map((child) => child.waitForLine(/^reported /, 15_000)));

      const source = createRedisShardsSource({ connection, staleAfterMs: 1_500 });
      const expected = () => ({ ready: true, serverCount: fake.gateway.guildCount(), shardCount: 4, shards: [0, 1, 2, 3].map((id) => fake.gateway.guildCount(id)) });
      await vi.waitFor(async () => expect(await source.read()).toEqual(expected()), { timeout: 5_000, interval: 50 });
      expect(fake.gateway.guildCount()).toBe(11);

      fake.gateway.addGuild();
      fake.gateway.addGuild();
      await vi.waitFor(async () => expect(await source.read()).toEqual(expected()), { timeout: 5_000, interval: 50 });
      expect(await source.read()).toMatchObject({ serverCount: 13 });

      // One process dies: its shards' reports expire and are named.
      await children[1]!.kill();
      await vi.waitFor(async () => expect(await source.read()).toEqual({ ready: false, reason: expect.stringContaining('no report from shards 1, 2') }), { timeout: 5_000, interval: 100 });
    } finally {
      await client.destroy();
    }
  }, 30_000);

  describe('onChange: a leader waiting for its last shard hears the report at once', () => {
    const CHANNEL = `${PREFIX}shards:changed`;
    const subscribers = async (on: RedisConnection) => (await on.client.pubSubNumSub(CHANNEL))[CHANNEL];

    it('hears each round, keeps commands working on the subscribed connection, and unsubscribes with the last listener', async () => {
      const source = createRedisShardsSource({ connection, staleAfterMs: 5_000 });
      const heard: string[] = [];
      const offFirst = source.onChange!(() => heard.push('first'));
      const offSecond = source.onChange!(() => heard.push('second'));
      await vi.waitFor(async () => expect(await subscribers(connection)).toBe(1), { timeout: 2_000, interval: 10 });

      const reporter = createShardReporter({ connection, source: ownShards(2, { 0: 3, 1: 4 }), everyMs: 60_000, ttlMs: 5_000 });
      reporters.push(reporter);
      await reporter.reportNow();
      await vi.waitFor(() => expect(heard).toEqual(['first', 'second']), { timeout: 2_000, interval: 5 });
      // RESP3: the subscribed connection still runs the reads.
      expect(await source.read()).toMatchObject({ ready: true, serverCount: 7 });

      offFirst();
      expect(await subscribers(connection)).toBe(1);
      offSecond();
      await vi.waitFor(async () => expect(await subscribers(connection)).toBe(0), { timeout: 2_000, interval: 10 });
      await reporter.reportNow();
      expect(await source.read()).toMatchObject({ ready: true });
      expect(heard).toEqual(['first', 'second']);
    });

    it('the stats poster posts the moment the last missing shard reports, with no schedule ticked', async () => {
      // One clock for the emulator, the client and the poster; the reports keep Redis's own time.
      const clock = createFakeClock(Date.now());
      const emu = await startTestEmulator({ now: clock.now });
      const fx = setupBot(emu);
      const config = parseConfig({ service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 }, stats: { enabled: true, source: 'redis', interval: '30m' }, state: { redis: { url: redis.url } } });
      const client = clientFor(emu, { projectToken: fx.projectToken, clock, retry: { maxAttempts: 1 } });
      const scheduler = createManualScheduler(clock.now);
      const source = createRedisShardsSource({ connection, staleAfterMs: 60_000, shardCount: 2 });
      const poster = createStatsPoster({ source, config: config.stats, client, store: createMemoryStore(), now: clock.now, schedules: scheduler.factory });
      const first = createShardReporter({ connection, source: ownShards(2, { 0: 30 }), everyMs: 60_000, ttlMs: 60_000 });
      const last = createShardReporter({ connection, source: ownShards(2, { 1: 12 }), everyMs: 60_000, ttlMs: 60_000 });
      reporters.push(first, last);
      try {
        await first.reportNow();
        await poster.start();
        await poster.idle();
        await vi.waitFor(async () => expect(await subscribers(connection)).toBe(1), { timeout: 2_000, interval: 10 });
        const posts = () => emu.admin.metrics(fx.projectId).map((m) => m.metrics);
        expect(posts()).toEqual([]);

        await last.reportNow();
        await vi.waitFor(() => expect(posts()).toEqual([{ server_count: 42, shard_count: 2 }]), { timeout: 2_000, interval: 5 });
        // The 5 s ready poll was the only other way, and no schedule was ticked.
        expect(scheduler.get('ready')!.started).toBe(false);
      } finally {
        await poster.stop(clock.now() + 5_000);
        await client.close();
        await emu.close();
      }
    });

    it('a listener that throws does not keep the others from hearing', async () => {
      const source = createRedisShardsSource({ connection, staleAfterMs: 5_000 });
      let heard = 0;
      const offs = [source.onChange!(() => { throw new Error('a broken listener'); }), source.onChange!(() => void (heard += 1))];
      await vi.waitFor(async () => expect(await subscribers(connection)).toBe(1), { timeout: 2_000, interval: 10 });
      const reporter = createShardReporter({ connection, source: ownShards(1, { 0: 1 }), everyMs: 60_000, ttlMs: 5_000 });
      reporters.push(reporter);
      await reporter.reportNow();
      await vi.waitFor(() => expect(heard).toBe(1), { timeout: 2_000, interval: 5 });
      for (const off of offs) off();
    });

    it('subscribes when Redis comes up, also after a restart, and tells the listener it is back', async () => {
      const own = await connectTestRedis(redis, PREFIX);
      try {
        await redis.stop();
        await vi.waitFor(() => expect(own.isUp).toBe(false), { timeout: 5_000, interval: 10 });
        const source = createRedisShardsSource({ connection: own, staleAfterMs: 5_000 });
        let heard = 0;
        const off = source.onChange!(() => void (heard += 1));
        await redis.start();
        // Back: one call for the reports Redis may hold from while it was away, and subscribed.
        await vi.waitFor(() => expect(heard).toBe(1), { timeout: 5_000, interval: 10 });
        await vi.waitFor(async () => expect(await subscribers(own)).toBe(1), { timeout: 5_000, interval: 10 });

        // Restarted under a live subscription: renewed, and heard again.
        await redis.stop();
        await redis.start();
        await vi.waitFor(async () => expect(own.isUp && (await subscribers(own))).toBe(1), { timeout: 5_000, interval: 20 });
        const before = heard;
        const reporter = createShardReporter({ connection, source: ownShards(1, { 0: 2 }), everyMs: 60_000, ttlMs: 5_000 });
        reporters.push(reporter);
        await vi.waitFor(() => expect(connection.isUp).toBe(true), { timeout: 5_000, interval: 10 });
        await reporter.reportNow();
        await vi.waitFor(() => expect(heard).toBeGreaterThan(before), { timeout: 2_000, interval: 5 });
        off();
      } finally {
        await own.close();
      }
    }, 20_000);
  });
});
