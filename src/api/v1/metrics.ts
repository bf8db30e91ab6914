import { requireValid } from '../context.js';
import {
  type FieldProblem,
  type Validated,
  isJsonObject,
  joinPath,
  jsonTypeName,
  underPath,
} from '../../contract/field-problems.js';
import { CONTRACT_LIMITS } from '../../contract/limits.js';
import { parseMetricsBatch } from '../../contract/metrics-batch.js';
import {
  METRICS_FIELDS,
  METRICS_KIND_RULES,
  type MetricsField,
  type MetricsKind,
  type MetricsPayload,
  metricsValueProblem,
  validateMetrics,
} from '../../contract/metrics.js';
import type { ApiContext, CallOptions } from '../context.js';
import { projectSegment } from '../credentials.js';

export type { MetricsKind, MetricsPayload } from '../../contract/metrics.js';

/** Options of the metrics calls: the per-call options, and what the client knows of the project. */
export interface MetricsCallOptions extends CallOptions {
  /**
   * The project's platform and type (`discord/bot`, `discord/server`, `roblox/game`,
   * `minecraft/game_server`). When given, the per-platform rule is checked before sending too
   * (only that kind's fields, at least one of its required ones). Default: unknown, so only the
   * rules that hold for every platform are checked and the service judges the rest.
   */
  kind?: MetricsKind;
}

/** One entry of {@link MetricsApi.batch}. */
export interface MetricsBatchInput {
  /** The platform payload, as for {@link MetricsApi.update}. */
  metrics: MetricsPayload;
  /** When the values were measured; at most 5 minutes ahead. Default: none (applied first, in order). */
  timestamp?: string | Date;
}

const isSet = (value: unknown): value is number => typeof value === 'number';

/**
 * Problems of a metrics payload that hold whatever the project's platform: a non-empty object of
 * known fields, each of its wire type (integers 0 or more) or null, at least one non-null value,
 * `online_count <= member_count` and `players_online <= players_max`. With `kind`, the whole rule
 * of that platform instead (`validateMetrics`).
 */
export function metricsPayloadProblems(payload: unknown, kind?: MetricsKind): FieldProblem[] {
  if (kind !== undefined) {
    const checked = validateMetrics(payload, kind);
    return checked.ok ? [] : checked.problems;
  }
  if (!isJsonObject(payload)) return [{ path: '', message: `must be a JSON object of metrics (got ${jsonTypeName(payload)})` }];
  const problems: FieldProblem[] = [];
  const known = Object.keys(METRICS_FIELDS);
  for (const [key, value] of Object.entries(payload)) {
    if (!Object.hasOwn(METRICS_FIELDS, key)) {
      problems.push({ path: key, message: `is not a metrics field (known: ${known.join(', ')})` });
      continue;
    }
    const problem = metricsValueProblem(key as MetricsField, value);
    if (problem) problems.push({ path: key, message: problem });
  }
  // Every platform needs one of its fields non-null, so an empty or all-null payload never passes.
  if (!Object.values(payload).some(isSet)) problems.push({ path: '', message: 'needs at least one metrics field with a non-null value' });
  // The pairs of every platform's rule: they name fields of one platform, so they hold for all.
  for (const [lesser, greater] of Object.values(METRICS_KIND_RULES).flatMap((rule) => rule.notAbove)) {
    const low = payload[lesser];
    const high = payload[greater];
    if (isSet(low) && isSet(high) && low > high) problems.push({ path: lesser, message: `must not exceed ${greater} (${low} > ${high})` });
  }
  return problems;
}

/**
 * Checks a `metrics/batch` body at `nowMs`: the envelope (1 to 100 entries, each `{metrics,
 * timestamp?}` with a date-time timestamp), timestamps at most 5 minutes ahead, and each payload
 * by {@link metricsPayloadProblems}. Paths name the entry (`data[3].metrics.server_count`).
 */
export function metricsBatchProblems(body: unknown, nowMs: number, kind?: MetricsKind): FieldProblem[] {
  const parsed = parseMetricsBatch(body);
  if (!parsed.ok) return parsed.problems;
  const maxAheadMs = CONTRACT_LIMITS.batchTimestampMaxFutureSeconds * 1000;
  return parsed.value.flatMap((entry) => {
    const path = joinPath('data', entry.index);
    const problems: FieldProblem[] = [];
    if (entry.timestampMs !== null && entry.timestampMs - nowMs > maxAheadMs) {
      problems.push({
        path: joinPath(path, 'timestamp'),
        message: `must not be more ` +
          `than ${maxAheadMs / 1000} seconds in the future (it is ${Math.ceil((entry.timestampMs - nowMs) / 1000)} s ahead)`,
      });
    }
    if (entry.metrics === undefined) problems.push({ path: joinPath(path, 'metrics'), message: 'is required: an object of metrics' });
    else problems.push(...underPath(joinPath(path, 'metrics'), metricsPayloadProblems(entry.metrics, kind)));
    return problems;
  });
}

/** An entry with a `Date` timestamp as the wire's ISO string; an invalid Date is left for the check to name. */
function wireEntry(entry: unknown): unknown {
  // Anything else is passed on unchanged, so the check names it (a caller without types may send anything).
  if (!isJsonObject(entry) || !(entry.timestamp instanceof Date)) return entry;
  const time = entry.timestamp;
  return { ...entry, timestamp: Number.isNaN(time.getTime()) ? 'Invalid Date' : time.toISOString() };
}

function validated<T>(value: T, problems: FieldProblem[]): Validated<T> {
  return problems.length === 0 ? { ok: true, value } : { ok: false, problems };
}

/** The v1 metrics operations. */
export function createMetricsApi(ctx: ApiContext) {
  return {
    /**
     * `PATCH /projects/:project_id/metrics` (scope `project.metrics.write`): posts the current
     * metrics. Only the fields of the project's platform may be sent (`server_count`/`shard_count`
     * for a bot, `member_count`/`online_count` for a server, `player_count` for a Roblox game, the
     * Minecraft fields for a Minecraft server); `null` clears a value. Checked before sending (see
     * {@link metricsPayloadProblems}; the per-platform rule too with `options.kind`). Idempotent,
     * so a 502 (upstream metrics service unavailable) is retried.
     * @param projectId Default: `@me` with a project token, the client's `projectId` with OAuth.
     */
    async update(payload: MetricsPayload, projectId?: string, options?: MetricsCallOptions): Promise<void> {
      const segment = projectSegment(ctx.credential, 'metrics.update', projectId);
      const body = requireValid('metrics.update', validated(payload, metricsPayloadProblems(payload, options?.kind)));
      await ctx.v1({
        operation: 'metrics.update',
        method: 'PATCH',
        path: `/projects/${segment}/metrics`,
        json: body,
        idempotent: true,
        options,
      });
    },

    /**
     * `POST /projects/:project_id/metrics/batch` (scope `project.metrics.write`): 1 to 100 entries;
     * the service applies those without a timestamp first in order, then the others by ascending
     * timestamp. `Date` timestamps are sent as ISO 8601 strings. Checked before sending against the
     * client's clock (see {@link metricsBatchProblems}). Idempotent (re-applying the same entries
     * gives the same result), so retried like a PATCH.
     * @param projectId Default: `@me` with a project token, the client's `projectId` with OAuth.
     */
    async batch(entries: readonly MetricsBatchInput[], projectId?: string, options?: MetricsCallOptions): Promise<void> {
      const segment = projectSegment(ctx.credential, 'metrics.batch', projectId);
      const data: unknown = Array.isArray(entries) ? entries.map(wireEntry) : entries;
      const body = requireValid('metrics.batch', validated({ data }, metricsBatchProblems({ data }, ctx.clock.now(), options?.kind)));
      await ctx.v1({
        operation: 'metrics.batch',
        method: 'POST',
        path: `/projects/${segment}/metrics/batch`,
        json: body,
        idempotent: true,
        options,
      });
    },
  };
}

/** The v1 metrics operations of a {@link ListingClient}. */
export type MetricsApi = ReturnType<typeof createMetricsApi>;
