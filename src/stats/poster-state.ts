import type { CapabilityContext } from '../runtime/capability.js';
import { silentLogger, type AgentLogger } from '../log/agent-logger.js';
import type { MetricsKind } from '../contract/metrics.js';
import { createSchedule, type Schedule, type ScheduleFactory } from '../runtime/scheduler.js';
import { createBufferStore, type BufferStore } from './buffer-store.js';
import type { PostTarget, StatsEvents } from './events.js';
import { createPostTargets, type PostTargets } from './post-targets.js';
import { STATS_COMPONENT, type StatsConfig, type StatsPosterOptions } from './poster-options.js';
import { readyDetail } from './poster-policy.js';
import { emptyBuffer, type SampleBuffer } from './samples.js';

/**
 * Everything a stats poster holds, as one plain object: its options with their defaults applied,
 * and what changes while it runs. The poster's steps (`poster-posts.ts`, `poster-runs.ts`) are
 * module functions over it, so each can be read (and tested) on its own.
 */
export interface PosterState {
  readonly options: StatsPosterOptions;
  readonly config: StatsConfig;
  readonly logger: AgentLogger;
  readonly now: () => number;
  readonly emit: CapabilityContext<StatsEvents>['emit'];
  readonly reportError: (error: unknown) => void;
  readonly makeSchedule: ScheduleFactory;
  readonly persistence: BufferStore;
  /** `v1_batch` in batch mode, else `v1`. */
  readonly v1Target: PostTarget;
  /** Per-target failures, waits and logged conditions. */
  readonly targets: PostTargets;
  /** Promises of samples, posts and readiness checks in flight (what `stop()` and `idle()` wait for). */
  readonly inFlight: Set<Promise<unknown>>;
  /** The running schedules: sample, post, ready. */
  readonly schedules: Schedule[];
  buffer: SampleBuffer;
  kind: MetricsKind | undefined;
  everReady: boolean;
  stopping: boolean;
  /** Aborted at the stop deadline: cuts a post in flight short. */
  aborter: AbortController;
  /** The flush in flight: one post at a time, whoever asks. */
  flushing: Promise<void> | undefined;
  postSchedule: Schedule | undefined;
  readySchedule: Schedule | undefined;
  retrySchedule: Schedule | undefined;
  /** The readiness read in flight, and whether one more was asked for meanwhile. */
  readyChecking: Promise<void> | undefined;
  checkAgain: boolean;
  unsubscribe: (() => void) | undefined;
}

/** A new poster state with the defaults of {@link StatsPosterOptions} applied; nothing runs yet. */
export function createPosterState(options: StatsPosterOptions): PosterState {
  const { config } = options;
  const logger = options.logger ?? silentLogger;
  const now = options.now ?? Date.now;
  const emit: CapabilityContext<StatsEvents>['emit'] = options.emit ?? (() => undefined);
  const reportError = options.reportError ?? (() => undefined);
  const state: PosterState = {
    options,
    config,
    logger,
    now,
    emit,
    reportError,
    makeSchedule: options.schedules ?? createSchedule,
    persistence: createBufferStore(options.store, logger, reportError),
    v1Target: config.mode === 'batch' ? 'v1_batch' : 'v1',
    targets: createPostTargets({
      logger,
      metrics: options.metrics,
      emit,
      now,
      mark: (ready, detail) => mark(state, ready, detail),
      readyDetail: () => currentReadyDetail(state),
      intervalMs: config.interval,
      backoffBaseMs: options.backoffBaseMs,
      nextRegularPost: () => state.postSchedule?.nextRunAt() ?? now() + config.interval,
    }),
    inFlight: new Set(),
    schedules: [],
    buffer: emptyBuffer(),
    kind: options.kind,
    everReady: false,
    stopping: false,
    aborter: new AbortController(),
    flushing: undefined,
    postSchedule: undefined,
    readySchedule: undefined,
    retrySchedule: undefined,
    readyChecking: undefined,
    checkAgain: false,
    unsubscribe: undefined,
  };
  return state;
}

/** Keeps `promise` in {@link PosterState.inFlight} until it settles. */
export function track<T>(state: PosterState, promise: Promise<T>): Promise<T> {
  state.inFlight.add(promise);
  void promise.finally(() => state.inFlight.delete(promise)).catch(() => undefined);
  return promise;
}

/** Sets the poster's readiness component. */
export function mark(state: PosterState, ready: boolean, detail: string): void {
  state.options.readiness?.set(STATS_COMPONENT, ready, detail);
}

/** The readiness detail once posting works, for the source as it describes itself now. */
export function currentReadyDetail(state: PosterState): string {
  return readyDetail(state.config, state.options.source.description);
}

/** Saves the buffer (never throws: a failed write is reported and the next one tries again). */
export function saveBuffer(state: PosterState, durable = false): Promise<void> {
  return state.persistence.save(state.buffer, { durable });
}
