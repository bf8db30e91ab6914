import { knownProjectKind, type Capability } from '../runtime/capability.js';
import { formatDuration } from '../config/duration.js';
import type { RedisConnection } from '../redis/connection.js';
import { createStatsPoster, type StatsPoster, type StatsPosterOptions } from './poster.js';
import type { StatsEvents } from './events.js';
import type { CountSource } from './source.js';
import { createShardReporter, type ShardReporter } from './sources/redis-shards.js';

/** Options of {@link createStatsCapability} beyond the source (tests: manual schedules). */
export type StatsCapabilityOptions = Pick<StatsPosterOptions, 'schedules' | 'random' | 'readyPollMs' | 'backoffBaseMs' | 'kind'>;


/** The `stats` capability, with a way to post at once. */
export interface StatsCapability extends Capability<StatsEvents> {
  /**
   * Posts now, as a scheduled post would (joining one in flight); the outcome comes as `posted`
   * or `postFailed`. Rejects when the capability is not started.
   */
  postNow(): Promise<void>;
}

/**
 * The `stats` capability: opens the count source, runs the poster with the agent's context and
 * `config.stats`, and on stop lets the poster finish (or checkpoint) before the source closes.
 * The agent adds it when `stats.enabled`; whether to run it is the agent's call, not this one's.
 */
export function createStatsCapability(source: CountSource, options: StatsCapabilityOptions = {}): StatsCapability {
  let poster: StatsPoster | undefined;
  let sourceStarted = false;
  return {
    name: 'stats',
    postNow: () => (poster ? poster.post() : Promise.reject(new Error('stats posting is not running'))),
    async start(context) {
      // The source first: the push endpoint must listen before the bot's first report.
      await source.start?.();
      sourceStarted = true;
      const project = knownProjectKind(context);
      poster = createStatsPoster({
        ...options,
        ...(project ? { project } : {}),
        source,
        config: context.config.stats,
        client: context.client,
        store: context.store,
        logger: context.logger,
        metrics: context.metrics,
        readiness: context.readiness,
        now: context.now,
        emit: context.emit,
        reportError: context.reportError,
      });
      await poster.start();
    },
    async stop(deadline) {
      try {
        await poster?.stop(deadline);
      } finally {
        poster = undefined;
        if (sourceStarted) {
          sourceStarted = false;
          await source.stop?.();
        }
      }
    },
  };
}

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
      context.readiness.set(SHARDS_COMPONENT, true, `reporting ${options.source.description} to Redis every ${formatDuration(redis.reportEvery)}`);
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
