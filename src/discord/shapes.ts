/*
 * The bot objects a bot owner hands the agent, told apart by shape, never by `instanceof`:
 * discord.js and discord-hybrid-sharding are optional peers, and the bot's copy of discord.js need
 * not be the one this package would resolve. Each source then reads the rest of the object it
 * needs, defensively.
 */

/** A `Map` or a discord.js `Collection`, as far as the shapes below look. */
interface MapLike {
  readonly size: number;
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

type Fields = Record<string, unknown>;

function isObject(value: unknown): value is Fields {
  return typeof value === 'object' && value !== null;
}

/** A `Map` or a discord.js `Collection`. */
function isMapLike(value: unknown): boolean {
  return isObject(value) && typeof value.size === 'number' && typeof value.values === 'function' && typeof value.get === 'function';
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

