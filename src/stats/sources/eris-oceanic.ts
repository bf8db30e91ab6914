import type { CountReading, CountSource } from '../source.js';
import { listIds } from './discord-client.js';

/*
 * Counts from an Eris or an Oceanic.js Client, in the bot's own process. Neither library is
 * imported (both are optional peers): each Client is read by shape into a plain snapshot, and one
 * pure function turns a snapshot into a reading, so the rules are the same for both and testable
 * without a gateway.
 *
 * Both libraries keep the guilds of READY that have not had their GUILD_CREATE yet (and the guilds
 * in an outage) in `unavailableGuilds`, apart from `guilds`: the bot is still in them, so they
 * count. Both emit `ready` once every shard is ready, after the GUILD_CREATEs or after
 * `guildCreateTimeout` (2 s), whichever comes first: unavailable guilds may remain then, and they
 * are counted, not waited for.
 */

/** The libraries read here, as their names are written. */
type GatewayLibrary = 'Eris' | 'Oceanic.js';

/** One shard a Client runs, as both libraries hold it. */
interface GatewayShardSnapshot {
  id: number;
  /** `Shard#ready`: false while it connects, identifies, waits for its guilds or resumes. */
  ready: boolean;
  /** `Shard#status`: `disconnected`, `connecting`, `handshaking`, `identifying`, `resuming`, `ready`. */
  status: string;
}

/** What an Eris or Oceanic.js Client holds, as plain data. */
export interface GatewayClientSnapshot {
  library: GatewayLibrary;
  /** `client.ready`: every shard it runs is ready (false again once they all disconnect). */
  ready: boolean;
  /** The bot's shard count (Eris `options.maxShards`, Oceanic.js `shards.options.maxShards`); null until known. */
  shardCount: number | null;
  /** The shards this Client runs (`client.shards`). */
  shards: GatewayShardSnapshot[];
  /** IDs of the guilds in `client.guilds`. */
  guildIds: Iterable<string>;
  /** IDs of the guilds in `client.unavailableGuilds`. */
  unavailableIds: Iterable<string>;
}

/** The shard Discord puts a guild on: `(id >> 22) % shardCount`, as both libraries compute it. */
export function shardOfGuildId(guildId: string, shardCount: number): number {
  try {
    return Number((BigInt(guildId) >> 22n) % BigInt(shardCount));
  } catch {
    return 0;
  }
}

/** Servers per shard for the given IDs (a guild in both collections counted once). */
function countPerShard(snapshot: GatewayClientSnapshot, shardCount: number): { total: number; perShard: number[] } {
  const ids = new Set<string>(snapshot.guildIds);
  for (const id of snapshot.unavailableIds) ids.add(id);
  const perShard = Array.from({ length: shardCount }, () => 0);
  for (const id of ids) perShard[shardOfGuildId(id, shardCount)]! += 1;
  return { total: ids.size, perShard };
}

/** The shards a snapshot's Client runs, or why they cannot be counted yet. */
type HeldShards = { ok: true; shardCount: number; held: number[] } | { ok: false; reason: string };

function heldShards(snapshot: GatewayClientSnapshot): HeldShards {
  const who = `the ${snapshot.library} Client`;
  if (snapshot.shardCount === null || snapshot.shards.length === 0) {
    return { ok: false, reason: `counts not ready: ${who} has not connected yet (client.connect() starts it)` };
  }
  // Status `ready` with `ready` false: READY came, the shard's GUILD_CREATEs are still coming.
  const pending = snapshot.shards
    .filter((shard) => !shard.ready)
    .map((shard) => `shard ${shard.id} is ${shard.status === 'ready' ? 'waiting for its guilds' : shard.status}`);
  if (!snapshot.ready)
    return { ok: false, reason: `counts not ready: ${who} is not ready yet${pending.length > 0 ? ` (${pending.join(', ')})` : ''}` };
  // One shard down while the others run: the client stays ready, its shard does not.
  if (pending.length > 0) return { ok: false, reason: `counts not ready: ${who}'s ${pending.join(', ')}` };
  return { ok: true, shardCount: snapshot.shardCount, held: snapshot.shards.map((shard) => shard.id).sort((a, b) => a - b) };
}

/**
 * The whole bot's counts from a snapshot: servers are the guilds in `guilds` and in
 * `unavailableGuilds`; shards and servers per shard follow from the shard count. Not ready before
 * the Client has connected, while it or any of its shards is not ready, or when it runs only some
 * of the bot's shards (clustered with `firstShardID`/`lastShardID` or `shardIDs`: the rest run
 * elsewhere, so it cannot count the whole bot).
 */
export function readingFromGatewaySnapshot(snapshot: GatewayClientSnapshot): CountReading {
  const shards = heldShards(snapshot);
  if (!shards.ok) return { ready: false, reason: shards.reason };
  const { shardCount, held } = shards;
  if (held.length < shardCount) {
    return {
      ready: false,
      reason: `counts not ready: ` +
        `this ${snapshot.library} Client runs ` +
        `shard${held.length > 1 ? 's' : ''} ${listIds(held)} of ${shardCount}; the others run elsewhere, so it cannot count the whole ` +
        `bot: use the push source, or Redis shard reports`,
    };
  }
  const { total, perShard } = countPerShard(snapshot, shardCount);
  return { ready: true, serverCount: total, shardCount, shards: perShard };
}

/** The shards this Client runs and their servers (for a shard reporter), or why not yet. */
export function ownShardsFromGatewaySnapshot(
  snapshot: GatewayClientSnapshot,
): { ready: true; shardCount: number; shards: Map<number, number> } | { ready: false; reason: string } {
  const shards = heldShards(snapshot);
  if (!shards.ok) return { ready: false, reason: shards.reason };
  const { perShard } = countPerShard(snapshot, shards.shardCount);
  return { ready: true, shardCount: shards.shardCount, shards: new Map(shards.held.map((id) => [id, perShard[id] ?? 0])) };
}

/** A collection as both libraries have them (a `Map` underneath). */
export interface KeyedLike {
  keys(): Iterable<unknown>;
}

/** The parts of an Eris or Oceanic.js `Shard` the snapshot reads. */
export interface GatewayShardLike {
  id: number;
  ready?: boolean;
  status?: string;
}

/** The parts of an Eris `Client` {@link erisSnapshot} reads. */
export interface ErisClientLike {
  ready?: boolean;
  options: { maxShards?: number | 'auto' };
  shards: { values(): Iterable<GatewayShardLike> };
  guilds: KeyedLike;
  unavailableGuilds: KeyedLike;
}

/** The parts of an Oceanic.js `Client` {@link oceanicSnapshot} reads. */
export interface OceanicClientLike {
  ready?: boolean;
  shards: { values(): Iterable<GatewayShardLike>; options: { maxShards: number } };
  guilds: KeyedLike;
  unavailableGuilds: KeyedLike;
}

function shardSnapshots(shards: Iterable<GatewayShardLike>): GatewayShardSnapshot[] {
  return [...shards].map((shard) => ({ id: shard.id, ready: shard.ready === true, status: String(shard.status ?? 'unknown') }));
}

function ids(collection: KeyedLike): string[] {
  return [...collection.keys()].map(String);
}

/** `options.maxShards` once it is a count (`'auto'` until `connect()` asked Discord). */
function erisShardCount(client: ErisClientLike): number | null {
  const maxShards = client.options.maxShards;
  return typeof maxShards === 'number' && maxShards > 0 ? maxShards : null;
}

/** `shards.options.maxShards` once it is a count (`-1` until `connect()` asked Discord). */
function oceanicShardCount(client: OceanicClientLike): number | null {
  const maxShards = client.shards.options.maxShards;
  return typeof maxShards === 'number' && maxShards > 0 ? maxShards : null;
}

/** An Eris Client's state as a snapshot. */
export function erisSnapshot(client: ErisClientLike): GatewayClientSnapshot {
  return {
    library: 'Eris',
    ready: client.ready === true,
    shardCount: erisShardCount(client),
    shards: shardSnapshots(client.shards.values()),
    guildIds: ids(client.guilds),
    unavailableIds: ids(client.unavailableGuilds),
  };
}

/** An Oceanic.js Client's state as a snapshot. */
export function oceanicSnapshot(client: OceanicClientLike): GatewayClientSnapshot {
  return {
    library: 'Oceanic.js',
    ready: client.ready === true,
    shardCount: oceanicShardCount(client),
    shards: shardSnapshots(client.shards.values()),
    guildIds: ids(client.guilds),
    unavailableIds: ids(client.unavailableGuilds),
  };
}

function gatewayClientSource(library: GatewayLibrary, shardCount: () => number | null, snapshot: () => GatewayClientSnapshot): CountSource {
  return {
    get description() {
      const count = shardCount();
      return `${library} Client (${count === null ? 'shards not known yet' : `${count} shard${count === 1 ? '' : 's'}`})`;
    },
    read: async (signal) => {
      signal?.throwIfAborted();
      return readingFromGatewaySnapshot(snapshot());
    },
  };
}

/**
 * Counts from an Eris Client in the agent's own process: servers from `guilds` plus
 * `unavailableGuilds`, shards from `options.maxShards`, servers per shard by guild ID. Ready once
 * `client.ready` and every shard is ready; see {@link readingFromGatewaySnapshot}.
 */
export function createErisClientSource(client: ErisClientLike): CountSource {
  return gatewayClientSource('Eris', () => erisShardCount(client), () => erisSnapshot(client));
}

/**
 * Counts from an Oceanic.js Client in the agent's own process: servers from `guilds` plus
 * `unavailableGuilds`, shards from `shards.options.maxShards`, servers per shard by guild ID.
 * Ready once `client.ready` and every shard is ready; see {@link readingFromGatewaySnapshot}.
 */
export function createOceanicClientSource(client: OceanicClientLike): CountSource {
  return gatewayClientSource('Oceanic.js', () => oceanicShardCount(client), () => oceanicSnapshot(client));
}
