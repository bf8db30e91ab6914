import { type FieldProblem, type Validated, invalid, isJsonObject, jsonTypeName } from './field-problems.js';
import type { Platform, ProjectType } from './limits.js';

/**
 * The metrics payload of `PATCH /projects/:id/metrics` and of each `metrics/batch` entry (the
 * contract's "Metrics payload fields" table and its per-platform rules, plus decisions.md's
 * Minecraft rule), shared by the emulator (422) and clients that check a payload before sending.
 */

/** Largest int32, the ceiling of the `integer (int32)` fields. */
export const INT32_MAX = 2 ** 31 - 1;

/**
 * Every metrics field and its wire type. Integers must be 0 or more (the contract says so for
 * counts; the emulator applies it to world sizes too, which cannot be negative). `int64` is checked
 * as a safe JavaScript integer, the most JSON can carry exactly. `number` is any JSON number.
 */
export const METRICS_FIELDS = {
  server_count: 'int32',
  shard_count: 'int32',
  member_count: 'int32',
  online_count: 'int32',
  player_count: 'int32',
  players_online: 'int32',
  players_max: 'int32',
  uptime_seconds: 'int64',
  tick_rate: 'number',
  tick_duration_avg: 'number',
  world_size_x: 'int32',
  world_size_y: 'int32',
} as const satisfies Record<string, 'int32' | 'int64' | 'number'>;

/** A metrics field name. */
export type MetricsField = keyof typeof METRICS_FIELDS;

/** A valid metrics payload: every field optional and nullable. */
export type MetricsPayload = Partial<Record<MetricsField, number | null>>;

/** The project kinds that post metrics, as `platform/type`. */
export type MetricsKind = 'discord/bot' | 'discord/server' | 'roblox/game' | 'minecraft/game_server';

/** What one project kind may send and must send. */
export interface MetricsKindRule {
  /** The only fields this kind may send. */
  fields: readonly MetricsField[];
  /** At least one of these must be present with a non-null value. */
  needOneOf: readonly MetricsField[];
  /** Pairs `[lesser, greater]`: when both are non-null, lesser must not exceed greater. */
  notAbove: readonly (readonly [MetricsField, MetricsField])[];
}

const MINECRAFT_FIELDS = [
  'players_online', 'players_max', 'uptime_seconds', 'tick_rate', 'tick_duration_avg', 'world_size_x', 'world_size_y',
] as const satisfies readonly MetricsField[];

/** The per-platform rules. `roblox/game` needs `player_count`, so its "one of" list has one field. */
export const METRICS_KIND_RULES: Record<MetricsKind, MetricsKindRule> = {
  'discord/bot': { fields: ['server_count', 'shard_count'], needOneOf: ['server_count', 'shard_count'], notAbove: [] },
  'discord/server': {
    fields: ['member_count', 'online_count'],
    needOneOf: ['member_count', 'online_count'],
    notAbove: [['online_count', 'member_count']],
  },
  'roblox/game': { fields: ['player_count'], needOneOf: ['player_count'], notAbove: [] },
  'minecraft/game_server': {
    fields: MINECRAFT_FIELDS,
    needOneOf: MINECRAFT_FIELDS,
    notAbove: [['players_online', 'players_max']],
  },
};

/** The metrics kind of a project, or undefined when its platform and type post no metrics. */
export function metricsKind(platform: Platform, type: ProjectType): MetricsKind | undefined {
  const kind = `${platform}/${type}`;
  return Object.hasOwn(METRICS_KIND_RULES, kind) ? (kind as MetricsKind) : undefined;
}

function isMetricsField(key: string): key is MetricsField {
  return Object.hasOwn(METRICS_FIELDS, key);
}

/** Why `value` is not a valid value of `field` (null is valid), or null when it is. */
export function metricsValueProblem(field: MetricsField, value: unknown): string | null {
  if (value === null) return null;
  const wire = METRICS_FIELDS[field];
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    return `must be ${wire === 'number' ? 'a number' : 'an integer 0 or more'} or null (got ${jsonTypeName(value)})`;
  }
  if (wire === 'number') return null;
  if (!Number.isInteger(value) || value < 0) return `must be an integer 0 or more (got ${value})`;
  const max = wire === 'int32' ? INT32_MAX : Number.MAX_SAFE_INTEGER;
  if (value > max) return `must be at most ${max} (${wire}) (got ${value})`;
  return null;
}

const isSet = (value: unknown): value is number => typeof value === 'number';

/**
 * Validates a metrics payload for a project of `kind`: a JSON object, not empty, only the kind's
 * fields, each of its wire type or null, at least one of the kind's required fields non-null, and
 * `online_count <= member_count`, `players_online <= players_max` when both are given. Paths are
 * the field names; the payload as a whole has the empty path.
 */
export function validateMetrics(payload: unknown, kind: MetricsKind): Validated<MetricsPayload> {
  const rule = METRICS_KIND_RULES[kind];
  const allowed = rule.fields.join(', ');
  if (!isJsonObject(payload)) {
    return invalid('', `must be a JSON object of ${kind} metrics (got ${jsonTypeName(payload)})`);
  }
  if (Object.keys(payload).length === 0) return invalid('', `is empty: give at least one of ${rule.needOneOf.join(', ')}`);
  const problems: FieldProblem[] = [];
  for (const [key, value] of Object.entries(payload)) {
    if (!isMetricsField(key)) {
      problems.push({ path: key, message: `is not a metrics field (allowed for ${kind}: ${allowed})` });
    } else if (!rule.fields.includes(key)) {
      problems.push({ path: key, message: `is not a field of ${kind} metrics (allowed: ${allowed})` });
    } else {
      const problem = metricsValueProblem(key, value);
      if (problem) problems.push({ path: key, message: problem });
    }
  }
  if (!rule.needOneOf.some((field) => isSet(payload[field]))) {
    const message = rule.needOneOf.length === 1
      ? `is required (a non-null value) for ${kind}`
      : `needs at least one of ${rule.needOneOf.join(', ')} with a non-null value`;
    problems.push({ path: rule.needOneOf.length === 1 ? rule.needOneOf[0]! : '', message });
  }
  for (const [lesser, greater] of rule.notAbove) {
    const low = payload[lesser];
    const high = payload[greater];
    if (isSet(low) && isSet(high) && low > high) {
      problems.push({ path: lesser, message: `must not exceed ${greater} (${low} > ${high})` });
    }
  }
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, value: payload as MetricsPayload };
}
