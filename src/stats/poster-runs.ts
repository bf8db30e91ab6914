import type { Schedule } from '../runtime/scheduler.js';
import type { PostTarget } from './events.js';
import { longestPostGapMs } from './post-interval.js';
import { DEFAULT_READY_POLL_MS } from './poster-options.js';
import { batchMaySendLast, flushReadsCounts, type FlushReason, postScheduleOptions, v0SampleFor } from './poster-policy.js';
import { postBatch, postPatch, postV0, readCounts, record } from './poster-posts.js';
import { mark, type PosterState, saveBuffer, track } from './poster-state.js';
import { keepAliveDue, type Sample } from './samples.js';
import { settleWithin } from '../runtime/settle.js';
import { errorMessage } from '../errors.js';

/**
 * When the poster runs: the flushes (one at a time), the retry timer, the readiness checks, the
 * schedules, and the start and stop around them. Module functions over {@link PosterState}.
 */

/** Arms one retry timer at the earliest time a failed target may be tried again. */
function armRetry(state: PosterState): void {
  state.retrySchedule?.stop();
  state.retrySchedule = undefined;
  if (state.stopping) return;
  const at = state.targets.nextRetryAt();
  if (at === undefined) return;
  state.retrySchedule = state.makeSchedule({
    name: 'retry',
    delayMs: Math.max(0, at - state.now()),
    onTick: () => flush(state, 'retry'),
    onError: state.reportError,
  });
  state.retrySchedule.start();
}

async function doFlush(state: PosterState, reason: FlushReason, fresh?: Sample): Promise<void> {
  const { config } = state;
  let sample = fresh;
  if (!sample && flushReadsCounts(reason, config.mode)) {
    sample = await readCounts(state);
    if (sample) await record(state, sample);
  }
  if (reason === 'first' && sample && waitForKeepAlive(state, sample)) return;
  const due = (name: PostTarget) => state.targets.due(name, reason === 'retry');
  if (due(state.v1Target)) {
    if (config.mode === 'batch') await postBatch(state, batchMaySendLast(reason, sample));
    else await postPatch(state, sample);
  }
  if (config.v0 && due('v0')) await postV0(state, v0SampleFor(reason, sample, state.buffer));
  armRetry(state);
}

/**
 * The first post after a start, when the counts equal the last accepted post (saved before a
 * restart) and that post is younger than the interval: nothing new to say, so instead of
 * posting at once the post schedule is lined up with the keep-alive (that post + the interval).
 * With a cron `schedule`, the pattern's next match posts. Returns whether the post waits.
 */
function waitForKeepAlive(state: PosterState, sample: Sample): boolean {
  const { config, buffer } = state;
  const at = state.now();
  const due = keepAliveDue(buffer, sample, { now: at, intervalMs: config.interval });
  if (due === undefined) return false;
  if (!config.schedule) {
    // A new post schedule whose runs sit on the keep-alive's grid, not on this start's.
    if (state.postSchedule) {
      state.postSchedule.stop();
      const index = state.schedules.indexOf(state.postSchedule);
      if (index >= 0) state.schedules.splice(index, 1);
    }
    state.postSchedule = addSchedule(state, makePostSchedule(state, due - at));
  }
  const lastPostAt = new Date(buffer.posted!.timestamp).toISOString();
  state.logger.info(
    {
      lastPostAt,
      nextPostAt: new Date(state.postSchedule?.nextRunAt() ?? due).toISOString(),
      serverCount: sample.serverCount,
      shardCount: sample.shardCount,
    },
    'counts unchanged since the last post; the first post waits for the keep-alive',
  );
  return true;
}

/** Posts (one flush at a time, whoever asks: the schedule, the first-ready trigger, a retry, a caller). */
export function flush(state: PosterState, reason: FlushReason, fresh?: Sample): Promise<void> {
  if (state.stopping) return Promise.resolve();
  state.flushing ??= track(state, doFlush(state, reason, fresh)).finally(() => (state.flushing = undefined));
  return state.flushing;
}

/** Takes a sample; the first ready one also triggers the first post. */
export async function sampleOnce(state: PosterState): Promise<void> {
  if (state.stopping) return;
  const wasReady = state.everReady;
  const sample = await readCounts(state);
  if (!sample) return;
  await record(state, sample);
  if (!wasReady) await flush(state, 'first', sample);
}

async function readyCheck(state: PosterState): Promise<void> {
  if (state.everReady) {
    state.readySchedule?.stop();
    return;
  }
  await sampleOnce(state);
}

/**
 * Reads the source for readiness, one read at a time: asked while a read is in flight (the
 * source signalled during it, so that read may have missed the change), it reads once more
 * when that one is done, however many times it was asked meanwhile.
 */
function checkReady(state: PosterState): Promise<void> {
  if (state.readyChecking) {
    state.checkAgain = true;
    return state.readyChecking;
  }
  state.checkAgain = false;
  state.readyChecking = track(state, readyCheck(state)).finally(() => {
    state.readyChecking = undefined;
    if (state.checkAgain && !state.everReady && !state.stopping) void checkReady(state);
  });
  return state.readyChecking;
}

function addSchedule(state: PosterState, schedule: Schedule): Schedule {
  state.schedules.push(schedule);
  schedule.start();
  return schedule;
}

function onRunError(state: PosterState, error: unknown): void {
  state.logger.warn({ err: errorMessage(error) }, 'a stats run failed');
  state.reportError(error);
}

function makePostSchedule(state: PosterState, firstDelayMs?: number): Schedule {
  return state.makeSchedule({
    ...postScheduleOptions(state.config, firstDelayMs, state.options.random),
    onTick: () => flush(state, 'tick'),
    onError: (error) => onRunError(state, error),
  });
}

/** Loads the saved samples and arms the schedules; the first post goes out once the counts are ready. */
export async function startPoster(state: PosterState): Promise<void> {
  const { config, options } = state;
  const { source } = options;
  state.stopping = false;
  state.everReady = false;
  state.aborter = new AbortController();
  state.buffer = await state.persistence.load();
  options.metrics?.setStatsInterval(longestPostGapMs(config, state.now()) / 1000);
  // The last accepted post survives a restart: its age on /metrics goes on from there.
  if (state.buffer.posted) options.metrics?.markSuccess('stats', state.buffer.posted.timestamp);
  mark(state, false, `waiting for counts from ${source.description}`);
  const onError = (error: unknown) => onRunError(state, error);
  if (config.mode === 'batch')
    addSchedule(
      state,
      state.makeSchedule({ name: 'sample', intervalMs: config.sampleInterval, onTick: () => track(state, sampleOnce(state)), onError }),
    );
  state.postSchedule = addSchedule(state, makePostSchedule(state));
  state.readySchedule = addSchedule(
    state,
    state.makeSchedule({
      name: 'ready',
      intervalMs: options.readyPollMs ?? DEFAULT_READY_POLL_MS,
      onTick: () => checkReady(state),
      onError,
    }),
  );
  // A source that says when its reading may have changed (a push arrived) is read at once,
  // not at the next poll: the first post follows the counts by milliseconds, not seconds.
  state.unsubscribe = source.onChange?.(() => {
    if (!state.everReady && !state.stopping) void checkReady(state);
  });
  // Not awaited: a slow source must not hold up the agent's start; `idle()` waits for it.
  void checkReady(state);
  state.logger.info(
    { mode: config.mode, interval: config.interval, schedule: config.schedule, v0: config.v0, source: source.description },
    'stats poster started',
  );
}

/** Stops the schedules, waits for a post in flight until `deadline` (epoch ms), saves the samples. */
export async function stopPoster(state: PosterState, deadline: number): Promise<void> {
  state.stopping = true;
  state.unsubscribe?.();
  state.unsubscribe = undefined;
  for (const schedule of state.schedules.splice(0)) schedule.stop();
  state.retrySchedule?.stop();
  state.retrySchedule = undefined;
  const outcome = await settleWithin(Promise.allSettled([...state.inFlight]), Math.max(0, deadline - state.now()));
  if (outcome === 'timeout') {
    // Past the deadline: cut the post short; its samples stay in the buffer for the next run.
    state.aborter.abort(new Error('the stats poster is stopping'));
    // The aborted call settles at once; let it, so that the buffer saved below is the final one.
    await settleWithin(Promise.allSettled([...state.inFlight]), 1_000);
    state.logger.warn(
      { pendingSamples: state.buffer.samples.length },
      'a stats post was still running at the stop deadline; its samples are kept',
    );
  }
  await saveBuffer(state, true);
}
