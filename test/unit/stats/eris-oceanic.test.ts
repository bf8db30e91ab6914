import { Client as DiscordJsClient, GatewayIntentBits } from 'discord.js';
import { Client as ErisClient } from 'eris';
import { Client as OceanicClient } from 'oceanic.js';
import { describe, expect, it } from 'vitest';
import { countSourceFor, isClusterManager, isDiscordClient, isErisClient, isOceanicClient, isShardingManager } from '../../../src/stats/sources/detect.js';
import {
  erisSnapshot,
  oceanicSnapshot,
  ownShardsFromGatewaySnapshot,
  readingFromGatewaySnapshot,
  shardOfGuildId,
  type GatewayClientSnapshot,
} from '../../../src/stats/sources/eris-oceanic.js';
import { ownShardsSourceFor } from '../../../src/stats/sources/redis-shards-local.js';
import { guildIdAt } from '../../helpers/fake-discord/index.js';

/** Generated guild IDs fall round robin on the shards: guildIdAt(n) is on shard n % shardCount. */
const guilds = (from: number, count: number) => Array.from({ length: count }, (_, i) => guildIdAt(from + i));

function snapshot(overrides: Partial<GatewayClientSnapshot> = {}): GatewayClientSnapshot {
  return {
    library: 'Eris',
    ready: true,
    shardCount: 2,
    shards: [
      { id: 0, ready: true, status: 'ready' },
      { id: 1, ready: true, status: 'ready' },
    ],
    guildIds: guilds(0, 5),
    unavailableIds: [],
    ...overrides,
  };
}

describe('Eris and Oceanic.js Clients, told apart by shape', () => {
  it('takes real (unconnected) clients of each library as theirs and as nothing else', () => {
    const eris = new ErisClient('Bot x', { intents: ['guilds'] });
    const oceanic = new OceanicClient({ auth: 'Bot x' });
    const discordJs = new DiscordJsClient({ intents: [GatewayIntentBits.Guilds] });
    expect([isErisClient(eris), isOceanicClient(eris), isDiscordClient(eris), isShardingManager(eris), isClusterManager(eris)]).toEqual([true, false, false, false, false]);
    expect([isErisClient(oceanic), isOceanicClient(oceanic), isDiscordClient(oceanic), isShardingManager(oceanic), isClusterManager(oceanic)]).toEqual([false, true, false, false, false]);
    expect([isErisClient(discordJs), isOceanicClient(discordJs)]).toEqual([false, false]);
    // Oceanic.js's `application` and `user` getters throw before READY: detection never runs them.
    expect(() => oceanic.application).toThrow();
  });

  it('refuses look-alikes that miss a part the sources read', () => {
    const maps = { guilds: new Map(), unavailableGuilds: new Map(), shards: new Map(), disconnect: () => undefined };
    expect(isErisClient({ ...maps, options: { maxShards: 1 } })).toBe(false); // no requestHandler
    expect(isErisClient({ ...maps, options: { maxShards: '2' }, requestHandler: {} })).toBe(false);
    expect(isOceanicClient({ ...maps, rest: {} })).toBe(false); // shards without options.maxShards
    expect(isOceanicClient({ ...maps, guilds: {}, rest: {}, shards: Object.assign(new Map(), { options: { maxShards: -1 } }) })).toBe(false);
  });

  it('gives each its source, not ready before connect(), with the shard count it knows', async () => {
    const auto = countSourceFor(new ErisClient('Bot x', { intents: ['guilds'], maxShards: 'auto' }));
    expect(auto.description).toBe('Eris Client (shards not known yet)');
    expect(await auto.read()).toEqual({ ready: false, reason: 'counts not ready: the Eris Client has not connected yet (client.connect() starts it)' });
    expect(countSourceFor(new ErisClient('Bot x', { intents: ['guilds'], maxShards: 2 })).description).toBe('Eris Client (2 shards)');

    const oceanic = countSourceFor(new OceanicClient({ auth: 'Bot x' }));
    expect(oceanic.description).toBe('Oceanic.js Client (shards not known yet)');
    expect(await oceanic.read()).toEqual({ ready: false, reason: 'counts not ready: the Oceanic.js Client has not connected yet (client.connect() starts it)' });
    expect(countSourceFor(new OceanicClient({ auth: 'Bot x', gateway: { maxShards: 1 } })).description).toBe('Oceanic.js Client (1 shard)');
  });
});

describe('readingFromGatewaySnapshot: the counts of an Eris or Oceanic.js cache', () => {
  it('counts guilds and unavailable guilds once each, per shard by guild ID', () => {
    expect(shardOfGuildId(guildIdAt(3), 2)).toBe(1);
    // 0, 2, 4 on shard 0; 1, 3 on shard 1; 5 and 6 unavailable; 4 in both collections (counted once).
    const reading = readingFromGatewaySnapshot(snapshot({ unavailableIds: [guildIdAt(5), guildIdAt(6), guildIdAt(4)] }));
    expect(reading).toEqual({ ready: true, serverCount: 7, shardCount: 2, shards: [4, 3] });
  });

  it('counts a cache of unavailable guilds only (READY came, no GUILD_CREATE yet, the client ready after its timeout)', () => {
    expect(readingFromGatewaySnapshot(snapshot({ guildIds: [], unavailableIds: guilds(0, 3) }))).toEqual({ ready: true, serverCount: 3, shardCount: 2, shards: [2, 1] });
  });

  it('is not ready before connect, while the client or a shard is not ready, and says which shard', () => {
    expect(readingFromGatewaySnapshot(snapshot({ shardCount: null }))).toEqual({ ready: false, reason: 'counts not ready: the Eris Client has not connected yet (client.connect() starts it)' });
    expect(readingFromGatewaySnapshot(snapshot({ shards: [] }))).toMatchObject({ ready: false, reason: expect.stringContaining('has not connected yet') });
    const starting = snapshot({
      library: 'Oceanic.js',
      ready: false,
      shards: [
        { id: 0, ready: false, status: 'ready' },
        { id: 1, ready: false, status: 'identifying' },
      ],
    });
    expect(readingFromGatewaySnapshot(starting)).toEqual({
      ready: false,
      reason: 'counts not ready: the Oceanic.js Client is not ready yet (shard 0 is waiting for its guilds, shard 1 is identifying)',
    });
    const oneDown = snapshot({ shards: [{ id: 0, ready: true, status: 'ready' }, { id: 1, ready: false, status: 'resuming' }] });
    expect(readingFromGatewaySnapshot(oneDown)).toEqual({ ready: false, reason: "counts not ready: the Eris Client's shard 1 is resuming" });
  });

  it('is never ready for a client that runs only some of the shards, and reports those shards to Redis', () => {
    const cluster = snapshot({ shardCount: 4, shards: [{ id: 3, ready: true, status: 'ready' }, { id: 2, ready: true, status: 'ready' }], guildIds: [guildIdAt(2), guildIdAt(3), guildIdAt(6)] });
    expect(readingFromGatewaySnapshot(cluster)).toEqual({
      ready: false,
      reason: 'counts not ready: this Eris Client runs shards 2 and 3 of 4; the others run elsewhere, so it cannot count the whole bot: use the push source, or Redis shard reports',
    });
    expect(ownShardsFromGatewaySnapshot(cluster)).toEqual({ ready: true, shardCount: 4, shards: new Map([[2, 2], [3, 1]]) });
    expect(ownShardsFromGatewaySnapshot(snapshot({ ready: false }))).toMatchObject({ ready: false });
  });
});

describe('the snapshots read each library where it keeps things', () => {
  const shards = (entries: [number, boolean, string][]) => new Map(entries.map(([id, ready, status]) => [id, { id, ready, status }]));

  it('Eris: options.maxShards, client.ready, guilds and unavailableGuilds by key', () => {
    const client = {
      ready: true,
      options: { maxShards: 2 },
      shards: shards([[0, true, 'ready'], [1, true, 'ready']]),
      guilds: new Map(guilds(0, 3).map((id) => [id, {}])),
      unavailableGuilds: new Map([[guildIdAt(3), {}]]),
    };
    expect(erisSnapshot(client)).toEqual({ ...snapshot(), guildIds: guilds(0, 3), unavailableIds: [guildIdAt(3)] });
    expect(erisSnapshot({ ...client, options: { maxShards: 'auto' } }).shardCount).toBeNull();
  });

  it('Oceanic.js: shards.options.maxShards (-1 until connect) and the rest alike; a redis reporter reads the same', async () => {
    const client = {
      ready: true,
      shards: Object.assign(shards([[0, true, 'ready']]), { options: { maxShards: 1 } }),
      guilds: new Map([[guildIdAt(0), {}]]),
      unavailableGuilds: new Map(),
    };
    expect(oceanicSnapshot(client)).toMatchObject({ library: 'Oceanic.js', ready: true, shardCount: 1, guildIds: [guildIdAt(0)] });
    expect(oceanicSnapshot({ ...client, shards: Object.assign(new Map(), { options: { maxShards: -1 } }) }).shardCount).toBeNull();

    const real = new OceanicClient({ auth: 'Bot x', gateway: { maxShards: 1 } });
    expect(await ownShardsSourceFor(real).readOwnShards()).toEqual({ ready: false, reason: 'counts not ready: the Oceanic.js Client has not connected yet (client.connect() starts it)' });
  });
});
