import { knownProjectKind, type Capability } from '../runtime/capability.js';
import { createStatsPoster, type StatsPoster, type StatsPosterOptions } from './poster.js';
import type { StatsEvents } from './events.js';
import type { CountSource } from './source.js';

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
