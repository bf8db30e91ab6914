import type { Platform, ProjectType } from '../contract/limits.js';
import { type MetricsKind, metricsKind } from '../contract/metrics.js';
import type { PostTarget } from './events.js';
import { ProjectKindError } from './post-failure.js';
import {
  afterBatchAccepted,
  afterPatchAccepted,
  batchToSend,
  failedReading,
  judgeReading,
  PAYLOAD_BUG_FIX,
  postedSample,
  recordSample,
  refusedBatch,
} from './poster-policy.js';
import { currentReadyDetail, mark, type PosterState, saveBuffer } from './poster-state.js';
import { type Sample, sampleV0Stats, toBatchEntries } from './samples.js';
import { errorMessage } from '../errors.js';

/**
 * The poster's I/O steps over its state: reading the source, recording a sample, and one post to
 * each target with what its answer means for the buffer. The decisions are in `poster-policy.ts`.
 */

/** Reads the counts; undefined when they are not ready (a filling cache is never posted). */
export async function readCounts(state: PosterState): Promise<Sample | undefined> {
  const { source } = state.options;
  const { logger } = state;
  let reading;
  try {
    reading = await source.read(state.aborter.signal);
  } catch (error) {
    reading = failedReading(error);
  }
  const verdict = judgeReading(reading, state.now());
  if (verdict.kind === 'not_ready') {
    if (!state.everReady) mark(state, false, `waiting for counts: ${verdict.reason}`);
    logger.debug({ reason: verdict.reason }, 'counts not ready; nothing sampled');
    return undefined;
  }
  if (verdict.kind === 'invalid') {
    logger.warn({ problems: verdict.problems, source: source.description }, 'the source gave counts the service cannot take; ignored');
    return undefined;
  }
  const { sample } = verdict;
  if (!state.everReady) {
    state.everReady = true;
    // Whoever saw it first (a post, a sample, the readiness poll), the poll is done.
    state.readySchedule?.stop();
    mark(state, true, currentReadyDetail(state));
    logger.info({ serverCount: sample.serverCount, shardCount: sample.shardCount, source: source.description }, 'counts ready');
  }
  return sample;
}

/** Records a ready sample and saves the buffer. */
export async function record(state: PosterState, sample: Sample): Promise<void> {
  state.buffer = recordSample(state.buffer, sample, state.config);
  await saveBuffer(state);
}

/** The project's metrics kind: given, or read once from `GET /projects/@me`. */
async function projectKind(state: PosterState): Promise<MetricsKind> {
  if (state.kind) return state.kind;
  const project = state.options.project ?? (await state.options.client.projects.get(undefined, { signal: state.aborter.signal }));
  const found = metricsKind(project.platform as Platform, project.type as ProjectType);
  // A wrong token (logged once with the fix, retried slowly), not an outage to back off from.
  if (found !== 'discord/bot') throw new ProjectKindError(project.platform, project.type);
  state.kind = found;
  return found;
}

/** Handles a failed post of `name`; `sent` are the samples a refused batch may cost. */
async function failed(state: PosterState, name: PostTarget, error: unknown, sent: readonly Sample[]): Promise<void> {
  const { logger, targets } = state;
  if (state.stopping && state.aborter.signal.aborted) {
    logger.debug({ target: name, err: errorMessage(error) }, 'post cut short by the stop deadline; samples kept');
    return;
  }
  const note = targets.failed(name, error);
  if (note.kind === 'rejected') {
    if (name === 'v1_batch') {
      const refused = refusedBatch(state.buffer, error, sent);
      state.buffer = refused.buffer;
      await saveBuffer(state);
      logger.error({ ...note.fields, dropped: refused.dropped, fix: refused.fix }, `the service refused the batch: ${refused.summary}`);
    } else {
      logger.error({ ...note.fields, fix: PAYLOAD_BUG_FIX }, 'the service refused the counts; they are not sent again');
    }
  }
  targets.emitFailure(name, error, name === 'v1_batch' ? state.buffer.samples.length : 1, note.retryAt);
}

/** Posts the buffered samples as one `metrics/batch`. See {@link batchToSend} for `allowLast`. */
export async function postBatch(state: PosterState, allowLast: boolean): Promise<void> {
  let sending: Sample[] = [];
  try {
    const kind = await projectKind(state);
    sending = batchToSend(state.buffer, allowLast);
    if (sending.length === 0) {
      state.targets.skipped('v1_batch');
      return;
    }
    const entries = toBatchEntries(sending, { now: state.now(), kind });
    await state.options.client.metrics.batch(entries, undefined, { kind, signal: state.aborter.signal });
    state.buffer = afterBatchAccepted(state.buffer, sending, state.now());
    await saveBuffer(state);
    state.targets.succeeded('v1_batch', { target: 'v1_batch', samples: sending.map((s, i) => postedSample(s, entries[i]!.timestamp)) });
  } catch (error) {
    await failed(state, 'v1_batch', error, sending);
  }
}

/** Posts the counts of `sample` with `PATCH metrics`; nothing to send without one. */
export async function postPatch(state: PosterState, sample: Sample | undefined): Promise<void> {
  if (!sample) {
    state.targets.skipped('v1');
    return;
  }
  try {
    const kind = await projectKind(state);
    await state.options.client.metrics.update({ server_count: sample.serverCount, shard_count: sample.shardCount }, undefined, {
      kind,
      signal: state.aborter.signal,
    });
    state.buffer = afterPatchAccepted(state.buffer, sample, state.now());
    await saveBuffer(state);
    state.targets.succeeded('v1', { target: 'v1', samples: [postedSample(sample)] });
  } catch (error) {
    await failed(state, 'v1', error, [sample]);
  }
}

/** Posts the counts of `sample` to v0; nothing to send without one. */
export async function postV0(state: PosterState, sample: Sample | undefined): Promise<void> {
  if (!sample) {
    state.targets.skipped('v0');
    return;
  }
  const body = sampleV0Stats(sample);
  try {
    await state.options.client.v0.postStats(body, undefined, { signal: state.aborter.signal });
    state.targets.succeeded('v0', { target: 'v0', samples: [postedSample(sample)], ...(body.shards ? { shards: [...body.shards] } : {}) });
  } catch (error) {
    await failed(state, 'v0', error, [sample]);
  }
}
