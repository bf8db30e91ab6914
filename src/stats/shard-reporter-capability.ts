import type { Capability } from '../runtime/capability.js';
import { formatDuration } from '../config/duration.js';
import type { RedisConnection } from '../redis/connection.js';
import type { CountSource } from './source.js';
import { createShardReporter, type ShardReporter } from './sources/redis-shards.js';

/** The readiness component and log binding of {@link createShardReporterCapability}. */
const SHARDS_COMPONENT = 'shards';

/** Options of {@link createShardReporterCapability}. */
export interface ShardReporterCapabilityOptions {
  /** This process's counts (`ownShardsSourceFor(bot)` reports only the shards it holds). */
  source: CountSource;
  /** The agent's Redis connection (started by the agent). */
  connection: RedisConnection;
  /** Names this process in its reports (the agent ID). */
  process: string;
}

/**
 * The `shards` capability of an embedded agent on Redis: every agent, leader or not, writes the
 * counts of the shards its process holds to Redis every `stats.redis.reportEvery` (each report
 * expiring after `stats.redis.staleAfter`), and the leader's stats poster posts their sum. It opens
 * the source first and closes it last; a failed round is logged and the next one tries again.
 */
export function createShardReporterCapability(options: ShardReporterCapabilityOptions): Capability {
  let reporter: ShardReporter | undefined;
  let sourceStarted = false;
  return {
    name: SHARDS_COMPONENT,
    async start(context) {
      const { redis } = context.config.stats;
      await options.source.start?.();
      sourceStarted = true;
      reporter = createShardReporter({
        connection: options.connection,
        source: options.source,
        everyMs: redis.reportEvery,
        ttlMs: redis.staleAfter,
        process: options.process,
        logger: context.logger,
        now: context.now,
      });
      reporter.start();
      context.readiness.set(
        SHARDS_COMPONENT,
        true,
        `reporting ${options.source.description} to Redis every ${formatDuration(redis.reportEvery)}`,
      );
    },
    async stop() {
      try {
        await reporter?.stop();
      } finally {
        reporter = undefined;
        if (sourceStarted) {
          sourceStarted = false;
          await options.source.stop?.();
        }
      }
    },
  };
}
