/*
 * The bot objects a bot owner hands the agent, told apart by shape, never by `instanceof`:
 * discord.js, discord-hybrid-sharding, Eris and Oceanic.js are optional peers, never imported, and
 * the bot's copy of a library need not be the one this package would resolve. Each source then reads the rest of the object it
 * needs, defensively.
 */

/** A `Map`, a discord.js `Collection`, an Eris `Collection` or an Oceanic.js `TypedCollection`. */
interface MapLike {
  readonly size: number;
  keys(): Iterable<unknown>;
  values(): Iterable<unknown>;
  get(key: unknown): unknown;
}

/** A discord.js `Client`: `guilds.cache`, `ws.shards` and `options`. */
export interface BotClient {
  guilds: { cache: MapLike };
  ws: { shards: MapLike };
  options: object;
}

/** A discord.js `ShardingManager`: a `shards` map, `fetchClientValues`, `totalShards` (a number or `'auto'`). */
export interface BotShardingManager {
  shards: MapLike;
  fetchClientValues(property: string, shard?: number): Promise<unknown>;
  totalShards: number | 'auto';
}

/** A discord-hybrid-sharding `ClusterManager`: `clusters`, `fetchClientValues`, `totalShards`/`totalClusters`. */
export interface BotClusterManager {
  clusters: MapLike;
  fetchClientValues(property: string, cluster?: number): Promise<unknown>;
  totalShards?: number;
  totalClusters?: number;
}

/**
 * An Eris `Client`: `guilds` and `unavailableGuilds` collections, a `shards` ShardManager (a
 * collection of `Shard`), `options.maxShards` (a number, or `'auto'` before `connect()`), and the
 * `requestHandler` that tells it from an Oceanic.js Client.
 */
export interface BotErisClient {
  guilds: MapLike;
  unavailableGuilds: MapLike;
  shards: MapLike;
  options: { maxShards: number | 'auto' };
  requestHandler: object;
  disconnect(options?: { reconnect?: boolean | 'auto' }): unknown;
}

/**
 * An Oceanic.js `Client`: `guilds` and `unavailableGuilds` TypedCollections, a `shards`
 * ShardManager with its `options.maxShards` (`-1` until `connect()` asked Discord), and `rest`.
 */
export interface BotOceanicClient {
  guilds: MapLike;
  unavailableGuilds: MapLike;
  shards: MapLike & { options: { maxShards: number } };
  rest: object;
  disconnect(reconnect?: boolean): unknown;
}

type Fields = Record<string, unknown>;

function isObject(value: unknown): value is Fields {
  return typeof value === 'object' && value !== null;
}

/** A `Map` or a discord.js `Collection`. */
function isMapLike(value: unknown): boolean {
  return (
    isObject(value) &&
    typeof value.size === 'number' &&
    typeof value.keys === 'function' &&
    typeof value.values === 'function' &&
    typeof value.get === 'function'
  );
}

/** A discord-hybrid-sharding `ClusterManager`: `clusters`, `fetchClientValues`, `totalShards`/`totalClusters`. */
export function isClusterManager(value: unknown): value is BotClusterManager {
  return (
    isObject(value) &&
    isMapLike(value.clusters) &&
    typeof value.fetchClientValues === 'function' &&
    (typeof value.totalShards === 'number' || typeof value.totalClusters === 'number')
  );
}

/** A discord.js `ShardingManager`: a `shards` map, `fetchClientValues`, `totalShards` (a number or `'auto'`). */
export function isShardingManager(value: unknown): value is BotShardingManager {
  return (
    isObject(value) &&
    isMapLike(value.shards) &&
    typeof value.fetchClientValues === 'function' &&
    (typeof value.totalShards === 'number' || value.totalShards === 'auto')
  );
}

/** A discord.js `Client`: `guilds.cache`, `ws.shards` and `options`. */
export function isDiscordClient(value: unknown): value is BotClient {
  return (
    isObject(value) &&
    isObject(value.guilds) &&
    isMapLike(value.guilds.cache) &&
    isObject(value.ws) &&
    isMapLike(value.ws.shards) &&
    isObject(value.options)
  );
}


/** What Eris and Oceanic.js Clients share: guild collections beside a `shards` collection. */
function hasGatewayCaches(value: Fields): boolean {
  return isMapLike(value.guilds) && isMapLike(value.unavailableGuilds) && isMapLike(value.shards) && typeof value.disconnect === 'function';
}

/**
 * An Eris `Client`. Read with plain property access only: nothing here runs a getter of the
 * library's (Oceanic.js's `application` and `user` getters throw before READY).
 */
export function isErisClient(value: unknown): value is BotErisClient {
  if (!isObject(value) || !hasGatewayCaches(value) || !isObject(value.options) || !isObject(value.requestHandler)) return false;
  const maxShards = value.options.maxShards;
  return typeof maxShards === 'number' || maxShards === 'auto';
}

/** An Oceanic.js `Client` (see {@link isErisClient} on getters). */
export function isOceanicClient(value: unknown): value is BotOceanicClient {
  if (!isObject(value) || !hasGatewayCaches(value) || !isObject(value.rest)) return false;
  const shards = value.shards as Fields;
  return isObject(shards.options) && typeof shards.options.maxShards === 'number';
}

const isIdList = (value: unknown): value is number[] =>
  Array.isArray(value) && value.length > 0 && value.every((id) => typeof id === 'number');

/**
 * Which process of a sharded bot `bot` runs in, in words: a discord.js Client that a
 * ShardingManager spawned (its `shard`, a ShardClientUtil: `shard 1 of 2`, `shards 2, 3 of 4`)
 * or a discord-hybrid-sharding cluster's Client (its `cluster`: `cluster 0 of 3`). Undefined for
 * anything else (a Client on its own, a manager, Eris, Oceanic.js). Read defensively: a getter of
 * the library that throws means none.
 */
export function botProcessOf(bot: unknown): string | undefined {
  try {
    if (!isDiscordClient(bot)) return undefined;
    const { shard, cluster } = bot as unknown as Fields;
    if (isObject(cluster) && typeof cluster.id === 'number' && typeof cluster.count === 'number')
      return `cluster ${cluster.id} of ${cluster.count}`;
    if (isObject(shard) && isIdList(shard.ids) && typeof shard.count === 'number') {
      return `${shard.ids.length === 1 ? 'shard' : 'shards'} ${shard.ids.join(', ')} of ${shard.count}`;
    }
  } catch {
    // A getter that throws: nothing known.
  }
  return undefined;
}
