import { describe, expect, it } from 'vitest';
import { ownShardsSourceFor } from '../../../src/stats/sources/redis-shards-local.js';
import {
  hasOwnShards,
  ownShardsFromReading,
  parseStoredReport,
  reportedShardCount,
  reportsFor,
  summariseRedisReports,
  type RedisShardReport,
} from '../../../src/stats/sources/redis-shards-reports.js';
import { createDiscordClientSource, type DiscordClientLike } from '../../../src/stats/sources/discord-client.js';

const report = (id: number, servers: number, shardCount = 16, reportedAt = 1_000): RedisShardReport => ({
  shard_id: id,
  shard_count: shardCount,
  server_count: servers,
  reportedAt,
  process: 'host/1',
});

/** A discord.js Client as the probe sees it: ready, these shards Ready, `guilds` per shard. */
function fakeClient(guildsPerShard: Record<number, number>, shardCount: number, extra: Partial<DiscordClientLike> = {}): DiscordClientLike {
  const guilds = Object.entries(guildsPerShard).flatMap(([id, n]) => Array.from({ length: n }, () => ({ shardId: Number(id), available: true })));
  const shards = Object.keys(guildsPerShard).map((id) => [Number(id), { id: Number(id), status: 0 }] as const);
  return { guilds: { cache: new Map(guilds.map((g, i) => [i, g])) }, ws: { shards: new Map(shards) }, options: { shardCount }, isReady: () => true, ...extra };
}

describe('shard reports in Redis: the pure core', () => {
  it('adds up the reports when every expected shard has one, with per-shard counts', () => {
    const reports = Array.from({ length: 4 }, (_, id) => report(id, id + 10, 4));
    expect(summariseRedisReports(reports, { now: 2_000, shardCount: undefined })).toEqual({ ready: true, serverCount: 46, shardCount: 4, shards: [10, 11, 12, 13] });
  });

  it('names the missing shards, compacting runs into ranges', () => {
    const have = [0, 1, 2, 8, 9, 10, 11, 13, 14, 15];
    const reading = summariseRedisReports(have.map((id) => report(id, 1)), { now: 2_000, shardCount: undefined });
    expect(reading).toEqual({ ready: false, reason: expect.stringContaining('no report from shards 3-7, 12') });
  });

  it('says when no process has reported at all', () => {
    expect(summariseRedisReports([], { now: 0, shardCount: 4 })).toEqual({ ready: false, reason: expect.stringContaining('no bot process has reported its shards') });
  });

  it('expects the configured shard count over what the reports say, and names the setting', () => {
    const reading = summariseRedisReports([report(0, 5, 2), report(1, 5, 2)], { now: 2_000, shardCount: 3 });
    expect(reading).toEqual({ ready: false, reason: expect.stringContaining('stats.redis.shardCount is 3') });
    expect(reading).not.toMatchObject({ reason: expect.stringContaining('stats.push') });
  });

  it('follows the shard count of the most recent report when none is configured (a reshard)', () => {
    const old = [report(0, 5, 2, 1_000), report(1, 5, 2, 1_000)];
    const resharded = [report(0, 3, 3, 2_000), report(1, 3, 3, 2_000), report(2, 4, 3, 2_000)];
    expect(reportedShardCount([...old, ...resharded])).toBe(3);
    expect(summariseRedisReports([...resharded, ...old], { now: 3_000, shardCount: undefined })).toMatchObject({ ready: true, serverCount: 10, shardCount: 3 });
    const halfway = summariseRedisReports([...old, resharded[2]!], { now: 3_000, shardCount: undefined });
    expect(halfway).toEqual({ ready: false, reason: expect.stringContaining('last reported for 2 shards, not 3') });
  });

  it('reads stored reports back, refusing what is not one', () => {
    expect(parseStoredReport(JSON.stringify(report(3, 7)))).toEqual(report(3, 7));
    for (const junk of [null, undefined, '', 'not json', '[]', '{}', JSON.stringify({ ...report(3, 7), shard_id: 16 }), JSON.stringify({ ...report(1, 1), reportedAt: 'x' })]) {
      expect(parseStoredReport(junk)).toBeUndefined();
    }
  });

  it('turns a whole-bot reading into every shard, or the total under shard 0 when it has no per-shard counts', () => {
    const perShard = ownShardsFromReading({ ready: true, serverCount: 5, shardCount: 2, shards: [2, 3] });
    expect(perShard).toEqual({ ready: true, shardCount: 2, shards: new Map([[0, 2], [1, 3]]) });
    const total = ownShardsFromReading({ ready: true, serverCount: 9, shardCount: 3 });
    expect(total).toEqual({ ready: true, shardCount: 3, shards: new Map([[0, 9], [1, 0], [2, 0]]) });
    expect(ownShardsFromReading({ ready: false, reason: 'filling' })).toEqual({ ready: false, reason: 'filling' });
    expect(reportsFor({ ready: true, shardCount: 4, shards: new Map([[3, 1], [2, 6]]) }, 5, 'p')).toEqual([
      { shard_id: 2, shard_count: 4, server_count: 6, reportedAt: 5, process: 'p' },
      { shard_id: 3, shard_count: 4, server_count: 1, reportedAt: 5, process: 'p' },
    ]);
  });
});

describe('the shards a process holds', () => {
  it('a Client on shards 2 and 3 of 4 reports those two, while its whole-bot reading refuses', async () => {
    const client = fakeClient({ 2: 4, 3: 1 }, 4);
    const source = ownShardsSourceFor(client);
    expect(hasOwnShards(source)).toBe(true);
    expect(hasOwnShards(createDiscordClientSource(client))).toBe(false);
    expect(await source.readOwnShards()).toEqual({ ready: true, shardCount: 4, shards: new Map([[2, 4], [3, 1]]) });
    expect(await source.read()).toMatchObject({ ready: false, reason: expect.stringContaining('outside any ShardingManager') });
  });

  it('a Client in a ShardingManager shard process takes the total from client.shard, and is not ready before login', async () => {
    const client = fakeClient({ 1: 2 }, 1, { shard: { count: 3, ids: [1], broadcastEval: async () => [] } });
    expect(await ownShardsSourceFor(client).readOwnShards()).toEqual({ ready: true, shardCount: 3, shards: new Map([[1, 2]]) });
    const before = fakeClient({}, 3);
    expect(await ownShardsSourceFor(before).readOwnShards()).toEqual({ ready: false, reason: expect.stringContaining('has not logged in yet') });
  });

  it('a ShardingManager running shards 4 and 5 of 6 reports those, asking each shard process', async () => {
    const probeOf = (id: number, guilds: number) => ({ ready: true, guilds, shards: [{ id, status: 0, guilds, unavailable: 0 }], shardCount: 6 });
    const shards = new Map([4, 5].map((id) => [id, { id, ready: true, process: {}, eval: async () => probeOf(id, id * 10) }]));
    const manager = { shards, totalShards: 6, shardList: [4, 5], fetchClientValues: async () => [] };
    const source = ownShardsSourceFor(manager);
    expect(await source.readOwnShards()).toEqual({ ready: true, shardCount: 6, shards: new Map([[4, 40], [5, 50]]) });
    shards.get(5)!.ready = false;
    expect(await source.readOwnShards()).toEqual({ ready: false, reason: expect.stringContaining('shard 5 is not ready yet') });
  });
});
