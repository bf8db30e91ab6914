import { ConfigError } from '../../config/errors.js';
import type { CountSource } from '../source.js';
import { createDiscordClientSource, type DiscordClientLike, type EmbeddedSourceOptions } from './discord-client.js';
import { createClusterManagerSource, type ClusterManagerLike } from './hybrid-cluster.js';
import { createShardingManagerSource, type ShardingManagerLike } from './sharding-manager.js';

/*
 * The embedded source is chosen by the shape of the object the bot passes, never by `instanceof`:
 * discord.js and discord-hybrid-sharding are optional peers, and the bot's copy of discord.js need
 * not be the one this package would resolve.
 */

type Fields = Record<string, unknown>;

function isObject(value: unknown): value is Fields {
  return typeof value === 'object' && value !== null;
}

/** A `Map` or a discord.js `Collection`. */
function isMapLike(value: unknown): boolean {
  return isObject(value) && typeof value.size === 'number' && typeof value.values === 'function' && typeof value.get === 'function';
}

/** A discord-hybrid-sharding `ClusterManager`: `clusters`, `fetchClientValues`, `totalShards`/`totalClusters`. */
export function isClusterManager(value: unknown): value is ClusterManagerLike {
  return (
    isObject(value) &&
    isMapLike(value.clusters) &&
    typeof value.fetchClientValues === 'function' &&
    (typeof value.totalShards === 'number' || typeof value.totalClusters === 'number')
  );
}

/** A discord.js `ShardingManager`: a `shards` map, `fetchClientValues`, `totalShards` (a number or `'auto'`). */
export function isShardingManager(value: unknown): value is ShardingManagerLike {
  return (
    isObject(value) &&
    isMapLike(value.shards) &&
    typeof value.fetchClientValues === 'function' &&
    (typeof value.totalShards === 'number' || value.totalShards === 'auto')
  );
}

/** A discord.js `Client`: `guilds.cache`, `ws.shards` and `options`. */
export function isDiscordClient(value: unknown): value is DiscordClientLike {
  return (
    isObject(value) &&
    isObject(value.guilds) &&
    isMapLike(value.guilds.cache) &&
    isObject(value.ws) &&
    isMapLike(value.ws.shards) &&
    isObject(value.options)
  );
}

/** What an unexpected value is, for the error (never its contents: it may hold a token). */
function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (typeof value !== 'object') return `a ${typeof value}`;
  const name = (value as { constructor?: { name?: unknown } }).constructor?.name;
  return typeof name === 'string' && name !== 'Object' ? `a ${name}` : 'a plain object';
}

/**
 * The count source for the object a bot passes to the agent in embedded mode: a discord.js
 * `Client` ({@link createDiscordClientSource}), a `ShardingManager`
 * ({@link createShardingManagerSource}) or a discord-hybrid-sharding `ClusterManager`
 * ({@link createClusterManagerSource}), chosen by shape.
 *
 * @throws ConfigError (code `config`) for anything else.
 */
export function countSourceFor(object: unknown, options: EmbeddedSourceOptions = {}): CountSource {
  if (isClusterManager(object)) return createClusterManagerSource(object, options);
  if (isShardingManager(object)) return createShardingManagerSource(object, options);
  if (isDiscordClient(object)) return createDiscordClientSource(object, options);
  const message = `is ${describeValue(object)}, not a discord.js Client, ShardingManager or ClusterManager`;
  throw new ConfigError(
    'invalid',
    `stats.source is embedded but the object passed as discord ${message}: pass the bot's Client (or, in the manager process, its ShardingManager or ClusterManager), or set stats.source to discord-rest or push`,
    [{ path: 'discord', message }],
  );
}
