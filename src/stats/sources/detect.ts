import { ConfigError } from '../../config/errors.js';
import type { CountSource } from '../source.js';
import * as shapes from '../../discord/shapes.js';
import { createDiscordClientSource, type DiscordClientLike, type EmbeddedSourceOptions } from './discord-client.js';
import { createClusterManagerSource, type ClusterManagerLike } from './hybrid-cluster.js';
import { createShardingManagerSource, type ShardingManagerLike } from './sharding-manager.js';
import { createErisClientSource, createOceanicClientSource, type ErisClientLike, type OceanicClientLike } from './eris-oceanic.js';

/*
 * The embedded source is chosen by the shape of the object the bot passes (`discord/shapes.ts`),
 * never by `instanceof`. The shape checks, narrowed to what the embedded sources read: each source
 * reads the fields beyond the shape defensively (a value it does not expect is a reason, not a crash).
 */
export const isClusterManager = shapes.isClusterManager as (value: unknown) => value is ClusterManagerLike;
export const isShardingManager = shapes.isShardingManager as (value: unknown) => value is ShardingManagerLike;
export const isDiscordClient = shapes.isDiscordClient as (value: unknown) => value is DiscordClientLike;
export const isErisClient = shapes.isErisClient as (value: unknown) => value is ErisClientLike;
export const isOceanicClient = shapes.isOceanicClient as (value: unknown) => value is OceanicClientLike;

/** What the embedded source takes, in words, for errors. */
const EMBEDDED_SHAPES = 'a discord.js Client, ShardingManager or ClusterManager, an Eris Client or an Oceanic.js Client';

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
 * ({@link createShardingManagerSource}), a discord-hybrid-sharding `ClusterManager`
 * ({@link createClusterManagerSource}), an Eris `Client` ({@link createErisClientSource}) or an
 * Oceanic.js `Client` ({@link createOceanicClientSource}), chosen by shape.
 *
 * @throws ConfigError (code `config`) for anything else.
 */
export function countSourceFor(object: unknown, options: EmbeddedSourceOptions = {}): CountSource {
  if (isClusterManager(object)) return createClusterManagerSource(object, options);
  if (isShardingManager(object)) return createShardingManagerSource(object, options);
  if (isDiscordClient(object)) return createDiscordClientSource(object, options);
  if (isErisClient(object)) return createErisClientSource(object);
  if (isOceanicClient(object)) return createOceanicClientSource(object);
  const message = `is ${describeValue(object)}, not ${EMBEDDED_SHAPES}`;
  throw new ConfigError(
    'invalid',
    `stats.source is embedded but the object passed as ` +
      `discord ${message}: pass the bot's Client (discord.js, Eris or Oceanic.js; in a discord.js manager process, its ShardingManager ` +
      `or ClusterManager), or set stats.source to discord-rest or push`,
    [{ path: 'discord', message }],
  );
}
