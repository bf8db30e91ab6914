import type { AgentLogger } from '../../agent/logger.js';
import type { RedisConnection } from '../../redis/connection.js';
import type { CountSource } from '../source.js';

/** Options of {@link createRedisShardsSource}. */
export interface RedisShardsSourceOptions {
  connection: RedisConnection;
  /** A report older than this has expired (`stats.redis.staleAfter`). */
  staleAfterMs: number;
  /** Shards expected in all (`stats.redis.shardCount`). Default: the shard count the reports carry. */
  shardCount?: number;
  /** Epoch ms. Default `Date.now`. */
  now?: () => number;
}

/**
 * The sum of the shard reports bot processes wrote to Redis: ready when every expected shard has a
 * fresh report, otherwise `ready: false` naming the missing shards.
 */
export function createRedisShardsSource(options: RedisShardsSourceOptions): CountSource {
  void options;
  throw new Error('createRedisShardsSource: not implemented yet');
}

/** Options of {@link createShardReporter}. */
export interface ShardReporterOptions {
  connection: RedisConnection;
  /** This process's shards (the embedded discord.js source). */
  source: CountSource;
  /** How often the reports are written (`stats.redis.reportEvery`). */
  everyMs: number;
  /** Each report's TTL (`stats.redis.staleAfter`). */
  ttlMs: number;
  logger?: AgentLogger;
  /** Epoch ms. Default `Date.now`. */
  now?: () => number;
}

/** Writes this process's shard counts to Redis on a timer (every agent, leader or not). */
export interface ShardReporter {
  start(): void;
  /** Writes the reports now; resolves with the shard IDs written (none when the source is not ready). */
  reportNow(): Promise<number[]>;
  stop(): Promise<void>;
}

/** Reports the shards `source` holds to Redis, for the leader's {@link createRedisShardsSource}. */
export function createShardReporter(options: ShardReporterOptions): ShardReporter {
  void options;
  throw new Error('createShardReporter: not implemented yet');
}
