import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClusterManager } from 'discord-hybrid-sharding';
import { Client, GatewayIntentBits, ShardingManager } from 'discord.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/config/errors.js';
import { countSourceFor, isClusterManager, isDiscordClient, isShardingManager } from '../../../src/stats/sources/detect.js';
import { PROBE_SCRIPT, type ClientProbe } from '../../../src/stats/sources/discord-client.js';

let dir: string;
let botFile: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'listing-agent-detect-'));
  botFile = join(dir, 'bot.mjs');
  await writeFile(botFile, '// never run: the managers are only constructed\n');
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A probe as a shard process would answer it. */
function probe(shards: [id: number, guilds: number][], ready = true): ClientProbe {
  return { ready, guilds: shards.reduce((n, [, g]) => n + g, 0), shardCount: null, shards: shards.map(([id, guilds]) => ({ id, status: 0, guilds, unavailable: 0 })) };
}

describe('countSourceFor: the embedded source by the shape of the object', () => {
  it('takes a real discord.js Client as a Client, not ready before login', async () => {
    const client = new Client({ intents: [GatewayIntentBits.Guilds] });
    expect(isDiscordClient(client)).toBe(true);
    expect(isShardingManager(client) || isClusterManager(client)).toBe(false);
    const source = countSourceFor(client);
    expect(source.description).toMatch(/^discord\.js Client \(/);
    expect(await source.read()).toEqual({ ready: false, reason: 'counts not ready: the Client has not logged in yet' });
  });

  it('takes a real discord.js ShardingManager as a ShardingManager, not ready before spawn', async () => {
    const manager = new ShardingManager(botFile, { totalShards: 2, token: 'x' });
    expect(isShardingManager(manager)).toBe(true);
    expect(isClusterManager(manager) || isDiscordClient(manager)).toBe(false);
    const source = countSourceFor(manager);
    expect(source.description).toBe('discord.js ShardingManager (2 shards)');
    expect(await source.read()).toEqual({ ready: false, reason: 'counts not ready: the ShardingManager has not spawned its shards yet' });
    expect(countSourceFor(new ShardingManager(botFile, { token: 'x' })).description).toBe('discord.js ShardingManager (shard count not known until spawn)');
  });

  it('takes a real discord-hybrid-sharding ClusterManager as a ClusterManager, not ready before spawn', async () => {
    const env = { ...process.env };
    try {
      const manager = new ClusterManager(botFile, { totalShards: 4, totalClusters: 2, token: 'x' });
      expect(isClusterManager(manager)).toBe(true);
      expect(isShardingManager(manager) || isDiscordClient(manager)).toBe(false);
      const source = countSourceFor(manager);
      expect(source.description).toBe('discord-hybrid-sharding ClusterManager (4 shards in 2 clusters)');
      expect(await source.read()).toEqual({ ready: false, reason: 'counts not ready: the ClusterManager has not spawned its clusters yet' });
    } finally {
      // ClusterManager's constructor writes its settings into process.env.
      process.env = env;
    }
  });

  it.each([
    ['null', null, 'null'],
    ['a string', 'token', 'a string'],
    ['a plain object', { token: 'secret-value', guilds: {} }, 'a plain object'],
    ['a Map', new Map(), 'a Map'],
    ['a Client-like object without ws', { guilds: { cache: new Map() }, options: {} }, 'a plain object'],
    ['a manager-like object without fetchClientValues', { shards: new Map(), totalShards: 2 }, 'a plain object'],
  ])('refuses %s with a config error that names the shapes it takes', (_, value, what) => {
    let error: unknown;
    try {
      countSourceFor(value);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const configError = error as ConfigError;
    expect(configError.code).toBe('config');
    expect(configError.message).toContain(`stats.source is embedded but the object passed as discord is ${what}, not a discord.js Client, ShardingManager or ClusterManager, an Eris Client or an Oceanic.js Client`);
    expect(configError.problems).toEqual([{ path: 'discord', message: expect.stringContaining(what) }]);
    expect(configError.message).not.toContain('secret-value');
  });
});

describe('the probe script', () => {
  it('is self-contained: evaluated on its own with this bound to a Client, it reads shards and unavailable guilds', () => {
    const client = {
      guilds: { cache: new Map([['1', { shardId: 0 }], ['2', { shardId: 1, available: false }], ['3', { shardId: 1 }]]) },
      ws: { shards: new Map([[0, { id: 0, status: 0 }], [1, { id: 1, status: 6 }]]) },
      options: { shardCount: 2 },
      isReady: () => false,
    };
    // What discord.js Client#_eval does: eval(script) with this = the Client, nothing else in scope.
    const evaluate = new Function(`return ${PROBE_SCRIPT};`) as (this: unknown) => unknown;
    expect(evaluate.call(client)).toEqual({
      ready: false,
      guilds: 3,
      shardCount: 2,
      shards: [
        { id: 0, status: 0, guilds: 1, unavailable: 0 },
        { id: 1, status: 6, guilds: 2, unavailable: 1 },
      ],
    });
  });
});

describe('the detected manager sources tolerate shards that cannot answer', () => {
  it('ShardingManager shape: a shard without a process, a shard not ready and a shard that never answers are reasons, not throws', async () => {
    const asked: string[] = [];
    type FakeShard = { id: number; ready: boolean; process: object | null; eval: (script: string) => Promise<unknown> };
    const manager = {
      totalShards: 3,
      shardList: 'auto' as const,
      fetchClientValues: async () => [],
      shards: new Map<number, FakeShard>([
        [0, { id: 0, ready: true, process: {}, eval: async (script: string) => (asked.push(script), probe([[0, 4]])) }],
        [1, { id: 1, ready: false, process: {}, eval: async () => probe([[1, 0]], false) }],
        [2, { id: 2, ready: true, process: {}, eval: () => new Promise<never>(() => undefined) }],
      ]),
    };
    const reading = await countSourceFor(manager, { timeoutMs: 50 }).read();
    expect(reading).toEqual({
      ready: false,
      reason:
        'counts not ready: shard 1 is not ready yet (its Client is logging in, reconnecting or respawning); shard 2 cannot be read yet (shard 2 did not answer within 50 ms)',
    });
    expect(asked).toEqual([PROBE_SCRIPT]);

    manager.shards.set(1, { id: 1, ready: true, process: null, eval: async () => probe([]) });
    manager.shards.delete(2);
    expect(await countSourceFor(manager).read()).toEqual({
      ready: false,
      reason: 'counts not ready: shard 1 has no process yet (spawning or respawning); shard 2 not spawned yet',
    });

    manager.shards.set(1, { id: 1, ready: true, process: {}, eval: async () => probe([[1, 2]]) });
    manager.shards.set(2, { id: 2, ready: true, process: {}, eval: async () => probe([[2, 5]]) });
    expect(await countSourceFor(manager).read()).toEqual({ ready: true, serverCount: 11, shardCount: 3, shards: [4, 2, 5] });
  });

  it('ShardingManager shape: a manager that runs only some of the shards is never ready', async () => {
    const manager = { totalShards: 4, shardList: [0, 1], fetchClientValues: async () => [], shards: new Map([[0, { id: 0, eval: async () => probe([[0, 1]]) }]]) };
    expect(await countSourceFor(manager).read()).toMatchObject({ ready: false, reason: expect.stringContaining('runs shards 0 and 1 of 4') });
  });

  it('ClusterManager shape: per-shard counts from clusters, a dead cluster and a garbled answer are reasons', async () => {
    const clusters = new Map<number, { id: number; thread: object | null; eval: (script: string) => Promise<unknown> }>([
      [0, { id: 0, thread: {}, eval: async () => probe([[0, 3], [1, 4]]) }],
      [1, { id: 1, thread: null, eval: async () => probe([[2, 1], [3, 1]]) }],
    ]);
    const manager = { totalShards: 4, totalClusters: 2, shardList: [], clusters, fetchClientValues: async () => [] };
    expect(await countSourceFor(manager).read()).toEqual({ ready: false, reason: 'counts not ready: cluster 1 has no process yet (spawning or respawning)' });

    clusters.set(1, { id: 1, thread: {}, eval: async () => 42 });
    expect(await countSourceFor(manager).read()).toEqual({ ready: false, reason: "counts not ready: cluster 1 answered something that is not a discord.js Client's state" });

    clusters.set(1, { id: 1, thread: {}, eval: async () => probe([[2, 1], [3, 1]]) });
    expect(await countSourceFor(manager).read()).toEqual({ ready: true, serverCount: 9, shardCount: 4, shards: [3, 4, 1, 1] });

    clusters.delete(1);
    expect(await countSourceFor(manager).read()).toEqual({ ready: false, reason: 'counts not ready: 1 of 2 clusters not spawned yet' });
  });
});
