import type { Dispatcher } from 'undici';
import type { AgentLogger } from '../log/agent-logger.js';
import type { ListingAgentConfig } from '../config/schema.js';
import { ListingAgentError } from '../errors.js';
import type { RedisConnection } from '../redis/connection.js';
import type { CountSource } from './source.js';
import type { DiscordRestSourceOptions } from './sources/discord-rest.js';
import type { PushSourceOptions } from './sources/push.js';
import type { RedisShardsSourceOptions } from './sources/redis-shards.js';
import { listenSetting, settingName, type AgentMode } from '../config/setting-names.js';

/** A source the configuration alone cannot make (`embedded` needs the bot's client object). */
export class SourceConfigError extends ListingAgentError {
  constructor(message: string) {
    super('stats_source', message);
  }
}

/** Options of `createConfiguredSource`, beyond the config (tests and embedders). */
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
  /**
   * Whose words the messages are in: `embedded` names a setting by its config path alone, the
   * daemon's voice (the default) with its variable too (config/setting-names.ts).
   */
  mode?: AgentMode;
}

/**
 * Which source `stats.source` names and with what options, decided without loading any source's
 * module: `createConfiguredSource` makes it at once, the agent when its stats start (so the
 * daemon loads only the source it is configured for).
 */
export type SourceSpec =
  | { kind: 'discord-rest'; options: DiscordRestSourceOptions }
  | { kind: 'push'; options: PushSourceOptions }
  | {
      kind: 'redis';
      options: RedisShardsSourceOptions;
      /** `push`: the reports are pushes shared by the agents (`stats.source: push` with `state.redis`), and the reasons say so. */
      wording?: 'push';
    };

/**
 * The {@link SourceSpec} of `config.stats.source`. Throws {@link SourceConfigError} for `embedded`,
 * whose counts come from the discord.js object passed to `createListingAgent`, and for a missing
 * secret (the config check refuses both when `stats.enabled`; this says it again for a caller that
 * did not enable stats).
 */
export function sourceSpec(config: ListingAgentConfig, options: ConfiguredSourceOptions = {}): SourceSpec {
  const stats = config.stats;
  const { mode } = options;
  switch (stats.source) {
    case 'discord-rest': {
      const token = config.discord.token;
      if (token === undefined) {
        throw new SourceConfigError(`the discord-rest source needs the bot token: set ${settingName('discord.token', mode)}`);
      }
      return {
        kind: 'discord-rest',
        options: {
          token,
          cacheTtlMs: stats.rest.cacheTtl,
          apiBaseUrl: options.discordApiBaseUrl ?? config.discord.apiBaseUrl,
          ...(stats.rest.shardCount !== undefined ? { shardCount: stats.rest.shardCount } : {}),
          ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
          ...(options.now ? { now: options.now } : {}),
          ...(mode ? { mode } : {}),
        },
      };
    }
    case 'push': {
      const key = stats.push.key;
      if (key === undefined) {
        throw new SourceConfigError(`the push source needs a shared key: set ${settingName('stats.push.key', mode)}`);
      }
      return {
        kind: 'push',
        options: {
          listen: stats.push.listen,
          path: stats.push.path,
          key,
          setting: listenSetting('stats.push.listen', mode),
          staleAfterMs: stats.push.staleAfter,
          ...(stats.push.shardCount !== undefined ? { shardCount: stats.push.shardCount } : {}),
          ...(options.now ? { now: options.now } : {}),
          ...(options.logger ? { logger: options.logger } : {}),
        },
      };
    }
    case 'redis': {
      if (options.redis === undefined) {
        throw new SourceConfigError(
          `the redis source reads shard reports through the agent's Redis connection: set ${settingName('state.redis.url', mode)}`,
        );
      }
      return {
        kind: 'redis',
        options: {
          connection: options.redis,
          staleAfterMs: stats.redis.staleAfter,
          ...(stats.redis.shardCount !== undefined ? { shardCount: stats.redis.shardCount } : {}),
          ...(options.now ? { now: options.now } : {}),
        },
      };
    }
    case 'embedded':
      throw new SourceConfigError(
        "stats.source is embedded: the counts come from the bot's Client (discord.js, Eris or Oceanic.js), ShardingManager or " +
          "ClusterManager passed to createListingAgent; a daemon or a one-shot post needs discord-rest or push",
      );
  }
}

/**
 * Makes the source of `spec`, loading only that source's module (the push endpoint's server, the
 * Discord REST reader or the Redis reader) when it is called: the agent's way, so that a daemon
 * loads only the source it is configured for. `createConfiguredSource` makes the same at once.
 */
export async function loadSourceFromSpec(spec: SourceSpec): Promise<CountSource> {
  switch (spec.kind) {
    case 'discord-rest':
      return (await import('./sources/discord-rest.js')).createDiscordRestSource(spec.options);
    case 'push':
      return (await import('./sources/push.js')).createPushSource(spec.options);
    case 'redis': {
      const wording = spec.wording === 'push' ? (await import('./sources/redis-shards-reports.js')).PUSH_WORDING : undefined;
      return (await import('./sources/redis-shards.js')).redisShardsSource(spec.options, wording);
    }
  }
}
