import { formatDuration } from '../config/duration.js';
import type { FieldProblem } from '../contract/field-problems.js';
import type { ScheduleOptions } from '../runtime/scheduler.js';
import type { PostedSample } from './events.js';
import { planRejection } from './post-failure.js';
import type { StatsConfig } from './poster-options.js';
import { appendSample, type Sample, type SampleBuffer, sampleProblems, samplesToSend, withoutSamples } from './samples.js';
import type { CountReading } from './source.js';
import { errorMessage } from '../errors.js';

/**
 * The poster's decisions as plain functions of a config, a buffer, a reading and a time: what a
 * reading means, what a flush sends, what the buffer becomes after an answer, how the post
 * schedule runs. No clock, no I/O, no timers: `poster-posts.ts` and `poster-runs.ts` carry them out.
 */

/** Why a flush runs: a post tick (or a caller), the first ready counts, or a retry timer. */
export type FlushReason = 'tick' | 'first' | 'retry';

/** The detail `/readyz` shows once counts are ready. */
export function readyDetail(config: Pick<StatsConfig, 'mode' | 'schedule' | 'interval'>, sourceDescription: string): string {
  const what = config.mode === 'batch' ? 'batches' : 'counts';
  const when = config.schedule ? `on '${config.schedule}'` : `every ${formatDuration(config.interval)}`;
  return `posting ${what} ${when} from ${sourceDescription}`;
}

/** What a source's reading comes to: a sample to record, not ready yet, or counts the service cannot take. */
export type ReadingVerdict =
  | { kind: 'sample'; sample: Sample }
  | { kind: 'not_ready'; reason: string }
  | { kind: 'invalid'; problems: FieldProblem[] };

/** A source that threw (the interface says it never does for an expected condition) is not ready. */
export function failedReading(error: unknown): CountReading {
  return { ready: false, reason: `the source failed: ${errorMessage(error)}` };
}

/** Judges a reading taken at `at` (epoch ms): a filling cache or a count out of the contract is never posted. */
export function judgeReading(reading: CountReading, at: number): ReadingVerdict {
  if (!reading.ready) return { kind: 'not_ready', reason: reading.reason };
  const sample: Sample = { timestamp: at, serverCount: reading.serverCount, shardCount: reading.shardCount };
  if (reading.shards) sample.shards = [...reading.shards];
  const problems = sampleProblems(sample);
  return problems.length > 0 ? { kind: 'invalid', problems } : { kind: 'sample', sample };
}

/** The buffer once a ready sample is recorded: appended to the history in batch mode, remembered as the newest in both. */
export function recordSample(buffer: SampleBuffer, sample: Sample, config: Pick<StatsConfig, 'mode' | 'skipUnchanged'>): SampleBuffer {
  return config.mode === 'batch'
    ? appendSample(buffer, sample, { skipUnchanged: config.skipUnchanged }).buffer
    : { ...buffer, last: sample };
}

/**
 * Whether a flush reads the counts first: a retry resends what is pending, a regular post first
 * takes the current counts (in batch mode that is also the one entry a flush sends when nothing
 * new is buffered). In patch mode there is nothing pending but the counts, so a retry reads too.
 */
export function flushReadsCounts(reason: FlushReason, mode: StatsConfig['mode']): boolean {
  return reason !== 'retry' || mode === 'patch';
}

/** Whether a batch flush may send the newest sample seen when nothing is buffered (it was just read, or it is the one that failed). */
export function batchMaySendLast(reason: FlushReason, sample: Sample | undefined): boolean {
  return sample !== undefined || reason === 'retry';
}

/** The samples a batch flush sends (oldest first); empty when there is nothing to say. */
export function batchToSend(buffer: SampleBuffer, allowLast: boolean): Sample[] {
  return buffer.samples.length > 0 || allowLast ? samplesToSend(buffer) : [];
}

/** The sample a v0 post sends: counts read long ago are not posted again as current, except to retry the post that failed. */
export function v0SampleFor(reason: FlushReason, sample: Sample | undefined, buffer: SampleBuffer): Sample | undefined {
  return sample ?? (reason === 'retry' ? buffer.last : undefined);
}

/** The buffer once the service accepted the batch `sent` at `at`: those samples leave, the newest is the last post. */
export function afterBatchAccepted(buffer: SampleBuffer, sent: readonly Sample[], at: number): SampleBuffer {
  return { ...withoutSamples(buffer, sent), posted: { ...sent.at(-1)!, timestamp: at } };
}

/** The buffer once the service accepted the counts of `sample` at `at`. */
export function afterPatchAccepted(buffer: SampleBuffer, sample: Sample, at: number): SampleBuffer {
  return { ...buffer, posted: { ...sample, timestamp: at } };
}

/** A sample as the `posted` event shows it; `timestamp` is the ISO time sent (default: when it was read). */
export function postedSample(sample: Sample, timestamp = new Date(sample.timestamp).toISOString()): PostedSample {
  return { timestamp, serverCount: sample.serverCount, shardCount: sample.shardCount };
}

/** The fix a refused payload's log line names: the agent built a body the service does not take. */
export const PAYLOAD_BUG_FIX = 'a payload bug: please report it with this detail';

/** What a refused batch costs: the buffer without the samples it drops, and the log line's parts. */
export interface RefusedBatch {
  buffer: SampleBuffer;
  dropped: number;
  fix: string;
  summary: string;
}

/** The buffer and the log line after the service (or the client's own check) refused the batch `sent`. */
export function refusedBatch(buffer: SampleBuffer, error: unknown, sent: readonly Sample[]): RefusedBatch {
  const plan = planRejection(error, sent);
  return {
    buffer: withoutSamples(buffer, plan.drop),
    dropped: plan.drop.length,
    fix: plan.clockAhead ? "this host's clock is ahead of the service's: sync it (NTP)" : PAYLOAD_BUG_FIX,
    summary: plan.summary,
  };
}

/** The post schedule: the cron `schedule`, or every `interval` (the first after `firstDelayMs`, default one interval). */
export function postScheduleOptions(
  config: Pick<StatsConfig, 'schedule' | 'interval' | 'jitter'>,
  firstDelayMs: number | undefined,
  random: (() => number) | undefined,
): Omit<ScheduleOptions, 'onTick' | 'onError'> {
  const timing = config.schedule
    ? { cron: config.schedule }
    : { intervalMs: config.interval, ...(firstDelayMs !== undefined ? { firstDelayMs: Math.max(0, firstDelayMs) } : {}) };
  return { name: 'post', ...timing, jitterMs: config.jitter, ...(random ? { random } : {}) };
}
