import type { CapabilityContext } from '../runtime/capability.js';
import { silentLogger, type AgentLogger } from '../log/agent-logger.js';
import type { Readiness } from '../runtime/readiness.js';
import type { ListingClient } from '../api/client.js';
import { formatDuration } from '../config/duration.js';
import type { ListingAgentConfig } from '../config/schema.js';
import type { Platform, ProjectType } from '../contract/limits.js';
import { type MetricsKind, metricsKind } from '../contract/metrics.js';
import type { AgentMetrics } from '../runtime/metrics.js';
import type { StateStore } from '../store/types.js';
import { createBufferStore } from './buffer-store.js';
import type { PostedSample, PostTarget, StatsEvents } from './events.js';
import { planRejection, ProjectKindError } from './post-failure.js';
import { longestPostGapMs } from './post-interval.js';
import { createPostTargets } from './post-targets.js';
import { appendSample, emptyBuffer, keepAliveDue, type Sample, type SampleBuffer, sampleProblems, samplesToSend, sampleV0Stats, toBatchEntries, withoutSamples } from './samples.js';
import { createSchedule, type Schedule, type ScheduleFactory } from '../runtime/scheduler.js';
import type { CountSource } from './source.js';

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

/** Options of {@link createStatsPoster}: the source, the `stats` config, and the agent's context. */
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
  /** Makes the schedules (sample, post, ready, retry). Default {@link createSchedule}; tests pass a manual scheduler. */
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

/** How long `[Symbol.asyncDispose]()` lets a post in flight finish. */
export const DISPOSE_DEADLINE_MS = 10_000;

type FlushReason = 'tick' | 'first' | 'retry';

/** Creates a stats poster. See {@link StatsPosterOptions} for the defaults. */
export function createStatsPoster(options: StatsPosterOptions): StatsPoster {
  const { source, config, client } = options;
  const logger = options.logger ?? silentLogger;
  const now = options.now ?? Date.now;
  const emit: CapabilityContext<StatsEvents>['emit'] = options.emit ?? (() => undefined);
  const reportError = options.reportError ?? (() => undefined);
  const makeSchedule = options.schedules ?? createSchedule;
  const persistence = createBufferStore(options.store, logger, reportError);
  const v1Target: PostTarget = config.mode === 'batch' ? 'v1_batch' : 'v1';

  let buffer: SampleBuffer = emptyBuffer();
  let kind: MetricsKind | undefined = options.kind;
  let everReady = false;
  let stopping = false;
  let aborter = new AbortController();
  let flushing: Promise<void> | undefined;
  const inFlight = new Set<Promise<unknown>>();
  const schedules: Schedule[] = [];
  let postSchedule: Schedule | undefined;
  let readySchedule: Schedule | undefined;
  let retrySchedule: Schedule | undefined;

  const track = <T>(promise: Promise<T>): Promise<T> => {
    inFlight.add(promise);
    void promise.finally(() => inFlight.delete(promise)).catch(() => undefined);
    return promise;
  };
  const mark = (ready: boolean, detail: string) => options.readiness?.set(STATS_COMPONENT, ready, detail);
  const readyDetail = () =>
    `posting ${config.mode === 'batch' ? 'batches' : 'counts'} ${config.schedule ? `on '${config.schedule}'` : `every ${formatDuration(config.interval)}`} from ${source.description}`;
  const save = (durable = false) => persistence.save(buffer, { durable });

  /** Reads the counts; undefined when they are not ready (a filling cache is never posted). */
  async function readCounts(): Promise<Sample | undefined> {
    let reading;
    try {
      reading = await source.read(aborter.signal);
    } catch (error) {
      // The interface says a source never throws for an expected condition; one that does is not ready.
      reading = { ready: false as const, reason: `the source failed: ${(error as Error).message}` };
    }
    if (!reading.ready) {
      if (!everReady) mark(false, `waiting for counts: ${reading.reason}`);
      logger.debug({ reason: reading.reason }, 'counts not ready; nothing sampled');
      return undefined;
    }
    const sample: Sample = { timestamp: now(), serverCount: reading.serverCount, shardCount: reading.shardCount };
    if (reading.shards) sample.shards = [...reading.shards];
    const problems = sampleProblems(sample);
    if (problems.length > 0) {
      logger.warn({ problems, source: source.description }, 'the source gave counts the service cannot take; ignored');
      return undefined;
    }
    if (!everReady) {
      everReady = true;
      // Whoever saw it first (a post, a sample, the readiness poll), the poll is done.
      readySchedule?.stop();
      mark(true, readyDetail());
      logger.info({ serverCount: sample.serverCount, shardCount: sample.shardCount, source: source.description }, 'counts ready');
    }
    return sample;
  }

  /** Records a ready sample: appended to the history in batch mode, remembered as the newest in both. */
  async function record(sample: Sample): Promise<void> {
    buffer =
      config.mode === 'batch'
        ? appendSample(buffer, sample, { skipUnchanged: config.skipUnchanged }).buffer
        : { ...buffer, last: sample };
    await save();
  }

  async function projectKind(): Promise<MetricsKind> {
    if (kind) return kind;
    const project = options.project ?? (await client.projects.get(undefined, { signal: aborter.signal }));
    const found = metricsKind(project.platform as Platform, project.type as ProjectType);
    // A wrong token (logged once with the fix, retried slowly), not an outage to back off from.
    if (found !== 'discord/bot') throw new ProjectKindError(project.platform, project.type);
    kind = found;
    return kind;
  }

  const nextRegularPost = () => postSchedule?.nextRunAt() ?? now() + config.interval;

  const targets = createPostTargets({
    logger,
    metrics: options.metrics,
    emit,
    now,
    mark,
    readyDetail,
    intervalMs: config.interval,
    backoffBaseMs: options.backoffBaseMs,
    nextRegularPost,
  });

  /** Handles a failed post of `name`; `sent` are the samples a refused batch may cost. */
  async function failed(name: PostTarget, error: unknown, sent: readonly Sample[]): Promise<void> {
    if (stopping && aborter.signal.aborted) {
      logger.debug({ target: name, err: (error as Error).message }, 'post cut short by the stop deadline; samples kept');
      return;
    }
    const note = targets.failed(name, error);
    if (note.kind === 'rejected') {
      const bug = 'a payload bug: please report it with this detail';
      if (name === 'v1_batch') {
        const plan = planRejection(error, sent);
        buffer = withoutSamples(buffer, plan.drop);
        await save();
        const fix = plan.clockAhead ? "this host's clock is ahead of the service's: sync it (NTP)" : bug;
        logger.error({ ...note.fields, dropped: plan.drop.length, fix }, `the service refused the batch: ${plan.summary}`);
      } else {
        logger.error({ ...note.fields, fix: bug }, 'the service refused the counts; they are not sent again');
      }
    }
    targets.emitFailure(name, error, name === 'v1_batch' ? buffer.samples.length : 1, note.retryAt);
  }

  const posted = (sample: Sample, timestamp = new Date(sample.timestamp).toISOString()): PostedSample => ({
    timestamp,
    serverCount: sample.serverCount,
    shardCount: sample.shardCount,
  });

  /** @param allowLast Send the newest sample seen when nothing is buffered (it was just read, or it is the one that failed). */
  async function postBatch(allowLast: boolean): Promise<void> {
    let sending: Sample[] = [];
    try {
      const projectKindValue = await projectKind();
      sending = buffer.samples.length > 0 || allowLast ? samplesToSend(buffer) : [];
      if (sending.length === 0) {
        targets.skipped('v1_batch');
        return;
      }
      const entries = toBatchEntries(sending, { now: now(), kind: projectKindValue });
      await client.metrics.batch(entries, undefined, { kind: projectKindValue, signal: aborter.signal });
      buffer = { ...withoutSamples(buffer, sending), posted: { ...sending.at(-1)!, timestamp: now() } };
      await save();
      targets.succeeded('v1_batch', { target: 'v1_batch', samples: sending.map((s, i) => posted(s, entries[i]!.timestamp)) });
    } catch (error) {
      await failed('v1_batch', error, sending);
    }
  }

  async function postPatch(sample: Sample | undefined): Promise<void> {
    if (!sample) {
      targets.skipped('v1');
      return;
    }
    try {
      const projectKindValue = await projectKind();
      await client.metrics.update({ server_count: sample.serverCount, shard_count: sample.shardCount }, undefined, { kind: projectKindValue, signal: aborter.signal });
      buffer = { ...buffer, posted: { ...sample, timestamp: now() } };
      await save();
      targets.succeeded('v1', { target: 'v1', samples: [posted(sample)] });
    } catch (error) {
      await failed('v1', error, [sample]);
    }
  }

  async function postV0(sample: Sample | undefined): Promise<void> {
    if (!sample) {
      targets.skipped('v0');
      return;
    }
    const body = sampleV0Stats(sample);
    try {
      await client.v0.postStats(body, undefined, { signal: aborter.signal });
      targets.succeeded('v0', { target: 'v0', samples: [posted(sample)], ...(body.shards ? { shards: [...body.shards] } : {}) });
    } catch (error) {
      await failed('v0', error, [sample]);
    }
  }

  /** Arms one retry timer at the earliest time a failed target may be tried again. */
  function armRetry(): void {
    retrySchedule?.stop();
    retrySchedule = undefined;
    if (stopping) return;
    const at = targets.nextRetryAt();
    if (at === undefined) return;
    retrySchedule = makeSchedule({ name: 'retry', delayMs: Math.max(0, at - now()), onTick: () => flush('retry'), onError: reportError });
    retrySchedule.start();
  }

  async function doFlush(reason: FlushReason, fresh?: Sample): Promise<void> {
    // A retry resends what is pending; a regular post first takes the current counts (in batch
    // mode that is also the one entry a flush sends when nothing new is buffered).
    let sample = fresh;
    if (!sample && (reason !== 'retry' || config.mode === 'patch')) {
      sample = await readCounts();
      if (sample) await record(sample);
    }
    if (reason === 'first' && sample && waitForKeepAlive(sample)) return;
    const due = (name: PostTarget) => targets.due(name, reason === 'retry');
    if (due(v1Target)) {
      if (config.mode === 'batch') await postBatch(sample !== undefined || reason === 'retry');
      else await postPatch(sample);
    }
    // Counts read long ago are not posted again as current, except to retry the post that failed.
    if (config.v0 && due('v0')) await postV0(sample ?? (reason === 'retry' ? buffer.last : undefined));
    armRetry();
  }

  /**
   * The first post after a start, when the counts equal the last accepted post (saved before a
   * restart) and that post is younger than the interval: nothing new to say, so instead of
   * posting at once the post schedule is lined up with the keep-alive (that post + the interval).
   * With a cron `schedule`, the pattern's next match posts. Returns whether the post waits.
   */
  function waitForKeepAlive(sample: Sample): boolean {
    const at = now();
    const due = keepAliveDue(buffer, sample, { now: at, intervalMs: config.interval });
    if (due === undefined) return false;
    if (!config.schedule) {
      // A new post schedule whose runs sit on the keep-alive's grid, not on this start's.
      if (postSchedule) {
        postSchedule.stop();
        const index = schedules.indexOf(postSchedule);
        if (index >= 0) schedules.splice(index, 1);
      }
      postSchedule = addSchedule(makePostSchedule(due - at));
    }
    const lastPostAt = new Date(buffer.posted!.timestamp).toISOString();
    logger.info(
      { lastPostAt, nextPostAt: new Date(postSchedule?.nextRunAt() ?? due).toISOString(), serverCount: sample.serverCount, shardCount: sample.shardCount },
      'counts unchanged since the last post; the first post waits for the keep-alive',
    );
    return true;
  }

  function flush(reason: FlushReason, fresh?: Sample): Promise<void> {
    if (stopping) return Promise.resolve();
    // One post at a time, whoever asks (the schedule, the first-ready trigger, a retry, a caller).
    flushing ??= track(doFlush(reason, fresh)).finally(() => (flushing = undefined));
    return flushing;
  }

  /** Takes a sample; the first ready one also triggers the first post. */
  async function sampleOnce(): Promise<void> {
    if (stopping) return;
    const wasReady = everReady;
    const sample = await readCounts();
    if (!sample) return;
    await record(sample);
    if (!wasReady) await flush('first', sample);
  }

  async function readyCheck(): Promise<void> {
    if (everReady) {
      readySchedule?.stop();
      return;
    }
    await sampleOnce();
  }

  let readyChecking: Promise<void> | undefined;
  let checkAgain = false;
  /**
   * Reads the source for readiness, one read at a time: asked while a read is in flight (the
   * source signalled during it, so that read may have missed the change), it reads once more
   * when that one is done, however many times it was asked meanwhile.
   */
  function checkReady(): Promise<void> {
    if (readyChecking) {
      checkAgain = true;
      return readyChecking;
    }
    checkAgain = false;
    readyChecking = track(readyCheck()).finally(() => {
      readyChecking = undefined;
      if (checkAgain && !everReady && !stopping) void checkReady();
    });
    return readyChecking;
  }
  let unsubscribe: (() => void) | undefined;

  const addSchedule = (schedule: Schedule) => {
    schedules.push(schedule);
    schedule.start();
    return schedule;
  };
  const onRunError = (error: unknown) => {
    logger.warn({ err: (error as Error).message }, 'a stats run failed');
    reportError(error);
  };
  /** The post schedule: the cron `schedule`, or every `interval` (the first after `firstDelayMs`, default one interval). */
  const makePostSchedule = (firstDelayMs?: number) =>
    makeSchedule({
      name: 'post',
      ...(config.schedule ? { cron: config.schedule } : { intervalMs: config.interval, ...(firstDelayMs !== undefined ? { firstDelayMs: Math.max(0, firstDelayMs) } : {}) }),
      jitterMs: config.jitter,
      ...(options.random ? { random: options.random } : {}),
      onTick: () => flush('tick'),
      onError: onRunError,
    });

  const poster: StatsPoster = {
    async start() {
      stopping = false;
      everReady = false;
      aborter = new AbortController();
      buffer = await persistence.load();
      options.metrics?.setStatsInterval(longestPostGapMs(config, now()) / 1000);
      // The last accepted post survives a restart: its age on /metrics goes on from there.
      if (buffer.posted) options.metrics?.markSuccess('stats', buffer.posted.timestamp);
      mark(false, `waiting for counts from ${source.description}`);
      if (config.mode === 'batch') addSchedule(makeSchedule({ name: 'sample', intervalMs: config.sampleInterval, onTick: () => track(sampleOnce()), onError: onRunError }));
      postSchedule = addSchedule(makePostSchedule());
      readySchedule = addSchedule(makeSchedule({ name: 'ready', intervalMs: options.readyPollMs ?? DEFAULT_READY_POLL_MS, onTick: () => checkReady(), onError: onRunError }));
      // A source that says when its reading may have changed (a push arrived) is read at once,
      // not at the next poll: the first post follows the counts by milliseconds, not seconds.
      unsubscribe = source.onChange?.(() => {
        if (!everReady && !stopping) void checkReady();
      });
      // Not awaited: a slow source must not hold up the agent's start; `idle()` waits for it.
      void checkReady();
      logger.info({ mode: config.mode, interval: config.interval, schedule: config.schedule, v0: config.v0, source: source.description }, 'stats poster started');
    },

    async stop(deadline) {
      stopping = true;
      unsubscribe?.();
      unsubscribe = undefined;
      for (const schedule of schedules.splice(0)) schedule.stop();
      retrySchedule?.stop();
      retrySchedule = undefined;
      const waitMs = Math.max(0, deadline - now());
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), waitMs);
        timer.unref();
      });
      const outcome = await Promise.race([Promise.allSettled([...inFlight]).then(() => 'done' as const), timedOut]);
      clearTimeout(timer);
      if (outcome === 'timeout') {
        // Past the deadline: cut the post short; its samples stay in the buffer for the next run.
        aborter.abort(new Error('the stats poster is stopping'));
        // The aborted call settles at once; let it, so that the buffer saved below is the final one.
        await Promise.race([Promise.allSettled([...inFlight]), new Promise((resolve) => setTimeout(resolve, 1_000).unref())]);
        logger.warn({ pendingSamples: buffer.samples.length }, 'a stats post was still running at the stop deadline; its samples are kept');
      }
      await save(true);
    },

    sample: () => track(sampleOnce()),
    post: () => flush('tick'),
    pendingSamples: () => buffer.samples.length,
    async idle() {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
    [Symbol.asyncDispose]: () => poster.stop(now() + DISPOSE_DEADLINE_MS),
  };
  return poster;
}
