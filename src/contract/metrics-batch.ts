import { z } from 'zod';
import {
  type FieldProblem,
  type Validated,
  invalid,
  isJsonObject,
  joinPath,
  jsonTypeName,
  underPath,
  unknownKeyProblems,
} from './field-problems.js';
import { CONTRACT_LIMITS } from './limits.js';
import { type MetricsKind, type MetricsPayload, validateMetrics } from './metrics.js';

/**
 * The rules of `POST /projects/:id/metrics/batch`: `{data: [{metrics, timestamp?}]}` with 1 to 100
 * entries; entries without a timestamp apply first in request order, then timestamped ones in
 * ascending timestamp order (ties keep request order); a timestamp may be at most 5 minutes ahead.
 *
 * Checking happens in two steps because an entry must be placed in the application order before
 * its payload can be judged: {@link parseMetricsBatch} checks the envelope (anything that would
 * make an entry impossible to place or its intent unclear: not an object, unknown keys, a
 * timestamp that is not a date-time), then {@link metricsBatchEntryProblems} checks each entry's
 * timestamp distance and payload (a missing `metrics` included) in application order.
 */

/** One batch entry whose envelope is valid; `metrics` is not checked yet. */
export interface MetricsBatchEntry {
  /** Position in the request's `data` (what problem paths name). */
  index: number;
  metrics: unknown;
  /** The timestamp as sent, or null when absent. */
  timestamp: string | null;
  /** `timestamp` in epoch milliseconds, or null when absent. */
  timestampMs: number | null;
}

/** The keys of a batch body and of one entry; any other key is a 422. */
const METRICS_BATCH_FIELDS = ['data'] as const;
/** The keys of one batch entry. */
const METRICS_BATCH_ENTRY_FIELDS = ['metrics', 'timestamp'] as const;

/**
 * ISO 8601 date-time as RFC 3339 profiles it: date, `T`, time with seconds (fraction optional),
 * and `Z` or a `±hh:mm` offset. A time without an offset would be ambiguous, so it is refused.
 */
const batchTimestampSchema = z.iso.datetime({ offset: true });

/**
 * Checks a batch body's envelope: an object with only `data`, an array of 1 to 100 entries, each
 * an object with only `metrics` and `timestamp` (optional; a date-time string, never null).
 * Returns the entries in request order; whether `metrics` is present is judged per entry.
 */
export function parseMetricsBatch(body: unknown): Validated<MetricsBatchEntry[]> {
  if (!isJsonObject(body)) return invalid('', `must be a JSON object {data: [...]} (got ${jsonTypeName(body)})`);
  const problems = unknownKeyProblems(body, METRICS_BATCH_FIELDS);
  const { data } = body;
  const min = CONTRACT_LIMITS.batchMinEntries;
  const max = CONTRACT_LIMITS.batchMaxEntries;
  if (!Array.isArray(data)) {
    problems.push({ path: 'data', message: `is required: an array of ${min} to ${max} entries (got ${jsonTypeName(data)})` });
    return { ok: false, problems };
  }
  if (data.length < min || data.length > max) {
    problems.push({ path: 'data', message: `must hold ${min} to ${max} entries (got ${data.length})` });
    return { ok: false, problems };
  }
  const entries: MetricsBatchEntry[] = [];
  data.forEach((entry: unknown, index) => {
    const path = joinPath('data', index);
    if (!isJsonObject(entry)) {
      problems.push({ path, message: `must be an object {metrics, timestamp?} (got ${jsonTypeName(entry)})` });
      return;
    }
    problems.push(...unknownKeyProblems(entry, METRICS_BATCH_ENTRY_FIELDS, path));
    let timestampMs: number | null = null;
    if (entry.timestamp !== undefined) {
      if (typeof entry.timestamp !== 'string' || !batchTimestampSchema.safeParse(entry.timestamp).success) {
        problems.push({
          path: joinPath(path, 'timestamp'),
          message: 'must be an ISO 8601 date-time with seconds and Z or an offset (2024-05-01T12:00:00Z)',
        });
      } else {
        timestampMs = Date.parse(entry.timestamp);
      }
    }
    const timestamp = timestampMs === null ? null : (entry.timestamp as string);
    entries.push({ index, metrics: entry.metrics, timestamp, timestampMs });
  });
  return problems.length > 0 ? { ok: false, problems } : { ok: true, value: entries };
}

/** The entries in application order: untimestamped in request order, then by ascending timestamp (stable). */
export function batchApplicationOrder(entries: readonly MetricsBatchEntry[]): MetricsBatchEntry[] {
  const untimed = entries.filter((e) => e.timestampMs === null);
  // Array.prototype.sort is stable, so equal timestamps keep request order.
  const timed = entries.filter((e) => e.timestampMs !== null).sort((a, b) => a.timestampMs! - b.timestampMs!);
  return [...untimed, ...timed];
}

/**
 * Problems of one entry, judged at `nowMs` (epoch milliseconds): a timestamp more than 5 minutes
 * ahead, and every problem of its payload for `kind`. Paths name the entry's request index
 * (`data[3].metrics.server_count`).
 */
export function metricsBatchEntryProblems(entry: MetricsBatchEntry, kind: MetricsKind, nowMs: number): FieldProblem[] {
  const path = joinPath('data', entry.index);
  const problems: FieldProblem[] = [];
  const maxAhead = CONTRACT_LIMITS.batchTimestampMaxFutureSeconds;
  const aheadMs = entry.timestampMs === null ? 0 : entry.timestampMs - nowMs;
  if (aheadMs > maxAhead * 1000) {
    problems.push({
      path: joinPath(path, 'timestamp'),
      message: `must not be more than ${maxAhead} seconds in the future (it is ${Math.ceil(aheadMs / 1000)} s ahead)`,
    });
  }
  if (entry.metrics === undefined) {
    problems.push({ path: joinPath(path, 'metrics'), message: `is required: an object of ${kind} metrics` });
    return problems;
  }
  const metrics = validateMetrics(entry.metrics, kind);
  if (!metrics.ok) problems.push(...underPath(joinPath(path, 'metrics'), metrics.problems));
  return problems;
}

/** A batch entry ready to apply. */
export interface ValidMetricsBatchEntry {
  index: number;
  metrics: MetricsPayload;
  timestamp: string | null;
}

/**
 * Validates a whole batch for a project of `kind` at `nowMs`, reporting every problem (what a
 * client checks before sending). On success the entries are in application order. The service
 * itself stops at the first bad entry in application order and keeps the earlier ones applied.
 */
export function validateMetricsBatch(body: unknown, kind: MetricsKind, nowMs: number): Validated<ValidMetricsBatchEntry[]> {
  const parsed = parseMetricsBatch(body);
  if (!parsed.ok) return parsed;
  const ordered = batchApplicationOrder(parsed.value);
  const problems = ordered.flatMap((entry) => metricsBatchEntryProblems(entry, kind, nowMs));
  if (problems.length > 0) return { ok: false, problems };
  return {
    ok: true,
    value: ordered.map((e) => ({ index: e.index, metrics: e.metrics as MetricsPayload, timestamp: e.timestamp })),
  };
}
