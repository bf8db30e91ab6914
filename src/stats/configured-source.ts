import type { Dispatcher } from 'undici';
import type { AgentLogger } from '../log/agent-logger.js';
import type { ListingAgentConfig } from '../config/schema.js';
import { ListingAgentError } from '../errors.js';
import type { CountSource } from './source.js';
import { createDiscordRestSource } from './sources/discord-rest.js';
import { createPushSource } from './sources/push.js';
import { createRedisShardsSource } from './sources/redis-shards.js';
import type { RedisConnection } from '../redis/connection.js';

/** A source the configuration alone cannot make (`embedded` needs the bot's client object). */
export class SourceConfigError extends ListingAgentError {
  constructor(message: string) {
    super('stats_source', message);
  }
}

/** Options of {@link createConfiguredSource}, beyond the config (tests and embedders). */
export interface ConfiguredSourceOptions {
  /** The discord-rest source's dispatcher. Default: undici's global one. */
  dispatcher?: Dispatcher;
  /** Epoch ms. Default `Date.now`. */
  now?: () => number;
  /** The push source's logger. Default: silent. */
  logger?: AgentLogger;
  /** Overrides `discord.apiBaseUrl`. */
  discordApiBaseUrl?: string;
  /** The agent's Redis connection, for the redis source (`state.redis`). */
  redis?: RedisConnection;
}

/**
 * The count source `stats.source` names, for the daemon and `stats post`: `discord-rest` (Discord's
 * API with `discord.token`) or `push` (the agent's endpoint the bot reports to). Throws
 * {@link SourceConfigError} for `embedded`, whose counts come from the discord.js object passed to
 * `createListingAgent`, and for a missing secret (the config check refuses both when
 * `stats.enabled`; this says it again for a caller that did not enable stats).
 */
export function createConfiguredSource(config: ListingAgentConfig, options: ConfiguredSourceOptions = {}): CountSource {
  const stats = config.stats;
  switch (stats.source) {
    case 'discord-rest': {
      const token = config.discord.token;
      if (token === undefined) {
        throw new SourceConfigError('the discord-rest source needs the bot token: set discord.token (LISTING_AGENT_DISCORD_TOKEN)');
      }
      return createDiscordRestSource({
        token,
        cacheTtlMs: stats.rest.cacheTtl,
        apiBaseUrl: options.discordApiBaseUrl ?? config.discord.apiBaseUrl,
        ...(stats.rest.shardCount !== undefined ? { shardCount: stats.rest.shardCount } : {}),
        ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
        ...(options.now ? { now: options.now } : {}),
      });
    }
    case 'push': {
      const key = stats.push.key;
      if (key === undefined) {
        throw new SourceConfigError('the push source needs a shared key: set stats.push.key (LISTING_AGENT_STATS_PUSH_KEY)');
      }
      return createPushSource({
        listen: stats.push.listen,
        path: stats.push.path,
        key,
        staleAfterMs: stats.push.staleAfter,
        ...(stats.push.shardCount !== undefined ? { shardCount: stats.push.shardCount } : {}),
        ...(options.now ? { now: options.now } : {}),
        ...(options.logger ? { logger: options.logger } : {}),
      });
    }
    case 'redis': {
      if (options.redis === undefined) {
        throw new SourceConfigError('the redis source reads shard reports through the agent\'s Redis connection: set state.redis.url (LISTING_AGENT_STATE_REDIS_URL)');
      }
      return createRedisShardsSource({
        connection: options.redis,
        staleAfterMs: stats.redis.staleAfter,
        ...(stats.redis.shardCount !== undefined ? { shardCount: stats.redis.shardCount } : {}),
        ...(options.now ? { now: options.now } : {}),
      });
    }
    case 'embedded':
      throw new SourceConfigError(
        "stats.source is embedded: the counts come from the discord.js Client, ShardingManager or ClusterManager passed to createListingAgent; a daemon or a one-shot post needs discord-rest or push",
      );
  }
}
