import { CONTRACT_LIMITS } from '../contract/limits.js';
import { type MetricsKind, type MetricsPayload, validateMetrics } from '../contract/metrics.js';
import type { FieldProblem } from '../contract/field-problems.js';
import type { V0StatsPost } from '../api/v0/index.js';

/**
 * The pure core of the batch history: the sample buffer, how it grows (skip unchanged), how it is
 * bounded (thin the oldest), and how a flush turns it into `metrics/batch` entries. No clock, no
 * I/O: the poster passes `now` in and persists what these functions return.
 */

/** One reading of the counts, stamped with when it was taken. */
export interface Sample {
  /** When the counts were read, epoch ms (the agent's clock). */
  timestamp: number;
  serverCount: number;
  shardCount: number;
  /** Servers per shard, when the source knows them (for v0). */
  shards?: number[];
}

/** The unsent history, as kept in the state store under `stats:buffer`. */
export interface SampleBuffer {
  /** Samples not yet accepted by the service, oldest first. */
  samples: Sample[];
  /**
   * The newest sample seen, even one left out as unchanged: what `skipUnchanged` compares with,
   * and what a flush sends when nothing new is buffered (at least one entry goes out per flush).
   */
  last?: Sample;
  /**
   * The counts of the newest post the service accepted (v1), stamped with when it was accepted
   * (not when they were read). After a restart, unchanged counts wait for the keep-alive (this
   * time + the interval) instead of going out at once: see {@link keepAliveDue}.
   */
  posted?: Sample;
}

/** A `metrics/batch` entry as sent: the payload and an ISO 8601 timestamp. */
export interface BatchEntry {
  metrics: MetricsPayload;
  timestamp: string;
}

/** Entries one batch may carry (the contract's 100). */
export const MAX_BATCH_ENTRIES: number = CONTRACT_LIMITS.batchMaxEntries;

/** How far ahead of the service's clock a batch timestamp may be (the contract's 5 minutes). */
export const MAX_FUTURE_MS: number = CONTRACT_LIMITS.batchTimestampMaxFutureSeconds * 1000;

/**
 * Headroom kept below {@link MAX_FUTURE_MS} when a skew is known: the skew is an estimate and the
 * request takes time to arrive.
 */
const FUTURE_MARGIN_MS = 30_000;

/** An empty buffer. */
export function emptyBuffer(): SampleBuffer {
  return { samples: [] };
}

/** True when two samples carry the same counts (their times may differ). */
function sameCounts(a: Sample, b: Sample): boolean {
  if (a.serverCount !== b.serverCount || a.shardCount !== b.shardCount) return false;
  const left = a.shards ?? [];
  const right = b.shards ?? [];
  return left.length === right.length && left.every((count, index) => count === right[index]);
}

/**
 * Thins `samples` (oldest first) to at most `max` entries. While there are too many, every other
 * entry of the oldest half is dropped (its first entry is kept, so the history still starts where
 * it started); the newest half keeps full resolution. A long outage thus ends up with a history
 * that spans all of it, sparser the older it is.
 * @param max Default {@link MAX_BATCH_ENTRIES} (100).
 */
export function thinSamples(samples: readonly Sample[], max: number = MAX_BATCH_ENTRIES): Sample[] {
  if (max < 1) return [];
  let result = [...samples];
  while (result.length > max) {
    const half = Math.floor(result.length / 2);
    // Two or three entries: the oldest "half" is the first entry alone, which thinning keeps. Keep
    // the first (the start of the history) and the newest instead.
    if (half <= 1) {
      result = max === 1 ? result.slice(-1) : [result[0]!, ...result.slice(result.length - (max - 1))];
      break;
    }
    const oldest = result.slice(0, half).filter((_, index) => index % 2 === 0);
    result = [...oldest, ...result.slice(half)];
  }
  return result;
}

/** Options of {@link appendSample}. */
export interface AppendOptions {
  /** Leave out a sample whose counts equal the newest one seen. */
  skipUnchanged: boolean;
  /** Bound of the buffer. Default {@link MAX_BATCH_ENTRIES} (100). */
  max?: number;
}

/**
 * Adds `sample` to the buffer: left out (but remembered as `last`) when `skipUnchanged` and its
 * counts equal the newest seen; otherwise appended, and the buffer thinned when it is over `max`.
 * Returns a new buffer and whether the sample was appended; the input is not changed.
 */
export function appendSample(buffer: SampleBuffer, sample: Sample, options: AppendOptions): { buffer: SampleBuffer; appended: boolean } {
  const seen = buffer.last;
  if (options.skipUnchanged && seen !== undefined && sameCounts(seen, sample)) {
    return { buffer: { ...buffer, last: sample }, appended: false };
  }
  const samples = thinSamples([...buffer.samples, sample], options.max ?? MAX_BATCH_ENTRIES);
  return { buffer: { ...buffer, samples, last: sample }, appended: true };
}

/**
 * The samples a flush sends, oldest first: the buffered ones (at most 100, thinned as above), or,
 * when none is buffered, the newest seen (`last`), so that one entry still goes out. Empty only
 * when nothing was ever seen.
 */
export function samplesToSend(buffer: SampleBuffer, max: number = MAX_BATCH_ENTRIES): Sample[] {
  if (buffer.samples.length > 0) return thinSamples(buffer.samples, max);
  return buffer.last ? [buffer.last] : [];
}

/** Options of {@link keepAliveDue}. */
export interface KeepAliveOptions {
  /** The agent's clock, epoch ms. */
  now: number;
  /** The posting interval: at least one post per interval goes out even when nothing changed (the keep-alive). */
  intervalMs: number;
}

/**
 * When the first post after a start may wait: the epoch ms the keep-alive is due (the last
 * accepted post + the interval) when `current` and every unsent sample carry the counts of that
 * post and it is younger than the interval; undefined when the post should go out at once
 * (nothing posted yet, counts changed, the keep-alive is due, or the clock is behind the post).
 */
export function keepAliveDue(buffer: SampleBuffer, current: Sample, options: KeepAliveOptions): number | undefined {
  const { posted } = buffer;
  if (posted === undefined) return undefined;
  const age = options.now - posted.timestamp;
  // A negative age is a clock stepped back since the post: its keep-alive time means nothing now.
  if (age < 0 || age >= options.intervalMs) return undefined;
  if (!sameCounts(current, posted) || !buffer.samples.every((sample) => sameCounts(sample, posted))) return undefined;
  return posted.timestamp + options.intervalMs;
}

/** The buffer without the samples in `sent` (by identity: those a flush took from it). */
export function withoutSamples(buffer: SampleBuffer, sent: readonly Sample[]): SampleBuffer {
  const gone = new Set(sent);
  return { ...buffer, samples: buffer.samples.filter((sample) => !gone.has(sample)) };
}

/** The latest timestamp a batch may carry, judged at `now` with the service's clock `serverSkewMs` ahead. */
export function timestampCeiling(now: number, serverSkewMs = 0): number {
  // Never later than our own now: a reading is never from the future, and with no (or a positive)
  // skew our clock is trusted. A service clock behind ours pulls the ceiling back within its 5 min.
  return Math.min(now, now + serverSkewMs + MAX_FUTURE_MS - FUTURE_MARGIN_MS);
}

/**
 * Timestamps for `samples` (oldest first), as sent: each at most the ceiling, and never earlier
 * than the one before it is later (a clock stepped back while sampling), so that the service's
 * timestamp order is the buffer's order. Times are only ever moved earlier, which is harmless.
 */
function sendTimestamps(samples: readonly Sample[], options: { now: number; serverSkewMs?: number }): number[] {
  const times = samples.map((sample) => sample.timestamp);
  let bound = timestampCeiling(options.now, options.serverSkewMs);
  for (let index = times.length - 1; index >= 0; index -= 1) {
    bound = Math.min(times[index]!, bound);
    times[index] = bound;
  }
  return times;
}

/** The metrics payload of a sample for a project of `kind` (a Discord bot: server and shard counts). */
export function samplePayload(sample: Sample, kind: MetricsKind = 'discord/bot'): MetricsPayload {
  if (kind !== 'discord/bot') {
    throw new Error(`server and shard counts are the metrics of a discord bot project; this project is ${kind}`);
  }
  return { server_count: sample.serverCount, shard_count: sample.shardCount };
}

/** Why a sample's payload would be refused for `kind` (empty when it is valid), checked locally before sending. */
export function sampleProblems(sample: Sample, kind: MetricsKind = 'discord/bot'): FieldProblem[] {
  if (kind !== 'discord/bot') return [{ path: '', message: `a ${kind} project does not take server and shard counts` }];
  const checked = validateMetrics(samplePayload(sample, kind), kind);
  return checked.ok ? [] : checked.problems;
}

/**
 * The v0 stats post of a sample: per-shard counts when the source knows every shard's (the total
 * is then their sum), else the total; the shard count with either.
 */
export function sampleV0Stats(sample: Sample): V0StatsPost {
  const { shards } = sample;
  if (shards !== undefined && shards.length > 0 && shards.length === sample.shardCount) {
    return { shards: [...shards], shardCount: sample.shardCount };
  }
  return { serverCount: sample.serverCount, shardCount: sample.shardCount };
}

/** Options of {@link batchEntries}. */
export interface BatchEntriesOptions {
  /** The agent's clock, epoch ms. */
  now: number;
  /**
   * How far the service's clock is ahead of ours (negative: behind), when known. Default 0: the
   * client does not expose response headers, so the local clock is trusted and every timestamp is
   * clamped to `now`.
   */
  serverSkewMs?: number;
  /** The project's kind. Default `discord/bot`. */
  kind?: MetricsKind;
}

/**
 * The `metrics/batch` entries of a flush: {@link samplesToSend} as `{metrics, timestamp}`, oldest
 * first, at most 100, with timestamps from {@link sendTimestamps} (never more than the contract's
 * 5 minutes ahead of the service's clock, in ascending order).
 */
export function batchEntries(buffer: SampleBuffer, options: BatchEntriesOptions): BatchEntry[] {
  return toBatchEntries(samplesToSend(buffer), options);
}

/** {@link batchEntries} for a given list of samples (oldest first). */
export function toBatchEntries(samples: readonly Sample[], options: BatchEntriesOptions): BatchEntry[] {
  const times = sendTimestamps(samples, options);
  return samples.map((sample, index) => ({
    metrics: samplePayload(sample, options.kind),
    timestamp: new Date(times[index]!).toISOString(),
  }));
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

function readSample(value: unknown): Sample | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const raw = value as Record<string, unknown>;
  if (!isCount(raw.timestamp) || !isCount(raw.serverCount) || !isCount(raw.shardCount)) return undefined;
  const sample: Sample = { timestamp: raw.timestamp, serverCount: raw.serverCount, shardCount: raw.shardCount };
  if (Array.isArray(raw.shards) && raw.shards.every(isCount)) sample.shards = [...(raw.shards as number[])];
  return sample;
}

/**
 * A buffer read back from the state store. Whatever is not a sample (a hand-edited or older file)
 * is left out rather than failing the poster; `dropped` says how many were. Samples are put in
 * time order and bounded again.
 */
export function parseBuffer(value: unknown): { buffer: SampleBuffer; dropped: number } {
  if (typeof value !== 'object' || value === null) return { buffer: emptyBuffer(), dropped: 0 };
  const raw = value as Record<string, unknown>;
  const list: unknown[] = Array.isArray(raw.samples) ? raw.samples : [];
  const samples = list.map(readSample).filter((sample): sample is Sample => sample !== undefined);
  samples.sort((a, b) => a.timestamp - b.timestamp);
  const last = readSample(raw.last) ?? samples.at(-1);
  const posted = readSample(raw.posted);
  const buffer: SampleBuffer = { samples: thinSamples(samples) };
  if (last) buffer.last = last;
  if (posted) buffer.posted = posted;
  return { buffer, dropped: list.length - samples.length };
}
