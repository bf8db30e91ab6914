import type { CapabilityContext } from '../runtime/capability.js';
import type { AgentLogger } from '../log/agent-logger.js';
import type { Readiness } from '../runtime/readiness.js';
import type { ListingClient } from '../api/client.js';
import type { ListingAgentConfig } from '../config/schema.js';
import type { MetricsKind } from '../contract/metrics.js';
import type { AgentMetrics } from '../runtime/metrics.js';
import type { StateStore } from '../store/types.js';
import type { ScheduleFactory } from '../runtime/scheduler.js';
import type { StatsEvents } from './events.js';
import type { CountSource } from './source.js';

/**
 * The stats poster's public types and defaults (re-exported by `poster.ts`), apart from its
 * pieces so that they can share them without importing each other in a circle.
 */

/** The validated `stats` section of the config. */
export type StatsConfig = ListingAgentConfig['stats'];

/** The readiness component of the poster. */
export const STATS_COMPONENT = 'stats';

/**
 * How often the source is read until its counts are first ready (then the first post goes out).
 * A source with `onChange` (the push source) is also read the moment it signals, so this poll is
 * only the fallback for it.
 */
export const DEFAULT_READY_POLL_MS = 5_000;

/** How long `[Symbol.asyncDispose]()` lets a post in flight finish. */
export const DISPOSE_DEADLINE_MS = 10_000;

/** Options of `createStatsPoster`: the source, the `stats` config, and the agent's context. */
export interface StatsPosterOptions {
  source: CountSource;
  config: StatsConfig;
  client: Pick<ListingClient, 'metrics' | 'v0' | 'projects'>;
  store: StateStore;
  /** Default: silent. */
  logger?: AgentLogger;
  /** Default: none (nothing counted). */
  metrics?: Pick<AgentMetrics, 'posts' | 'markSuccess' | 'setStatsInterval'>;
  /** Default: none. */
  readiness?: Pick<Readiness, 'set'>;
  /** Epoch ms. Default `Date.now`. */
  now?: () => number;
  /** Emits `posted` and `postFailed`. Default: nothing. */
  emit?: CapabilityContext<StatsEvents>['emit'];
  /** Reports an error that is not a post failure (a store write). Default: nothing. */
  reportError?: (error: unknown) => void;
  /** Makes the schedules (sample, post, ready, retry). Default `createSchedule`; tests pass a manual scheduler. */
  schedules?: ScheduleFactory;
  /** Randomness for the post jitter, [0, 1). Default `Math.random`. */
  random?: () => number;
  /** Default {@link DEFAULT_READY_POLL_MS}. */
  readyPollMs?: number;
  /** First backoff after a 5xx or network failure, doubling up to the interval. Default 30 s. */
  backoffBaseMs?: number;
  /** The project's metrics kind. Default: from `project`, else read once from `GET /projects/@me`. */
  kind?: MetricsKind;
  /**
   * The project's platform and type, when the caller has them already (the agent's
   * `context.project`), so that `@me` is not asked again. Default: read once from `GET /projects/@me`.
   */
  project?: { platform: string; type: string };
}

/** The stats poster: samples, posts, retries, and keeps the unsent history in the store. */
export interface StatsPoster {
  /** Loads the saved samples and arms the schedules; the first post goes out once the counts are ready. */
  start(): Promise<void>;
  /** Stops the schedules, waits for a post in flight until `deadline` (epoch ms), saves the samples. */
  stop(deadline: number): Promise<void>;
  /** Takes a sample now (batch mode). */
  sample(): Promise<void>;
  /** Posts now (what a post tick does); joins a post in flight. */
  post(): Promise<void>;
  /** Samples waiting to be sent. */
  pendingSamples(): number;
  /** Resolves when no sample, post or readiness check is in flight. */
  idle(): Promise<void>;
  /** `stop()` with a deadline {@link DISPOSE_DEADLINE_MS} from now. */
  [Symbol.asyncDispose](): Promise<void>;
}
