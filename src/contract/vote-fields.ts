import { SNOWFLAKE_PATTERN, VOTE_FIELD_LIMITS } from './limits.js';
import { printable } from './printable.js';

/*
 * The rules a vote from the service keeps, as pure functions ({@link VOTE_FIELD_LIMITS} says why
 * each bound is what it is). Both roads check them at the edge: the votes cursor's page schema and
 * the poller (`created_at` against the clock), the webhook receiver's event check and its verdict.
 * Each problem names the field and what is wrong, quoting at most a short, printable excerpt of
 * the value: a refused value may be 60,000 characters long or carry a newline.
 */

/** Why a vote from the service was refused: the reason its log line and its summary count it under. */
export type VoteRefusalReason = 'bad_vote_shape' | 'bad_vote_id' | 'bad_vote_weight' | 'bad_vote_time' | 'other_project';

/** A field of a vote that breaks a rule. */
export interface VoteFieldProblem {
  /** The rule it breaks: what its log line and the refusals' summary count it under. */
  readonly reason: VoteRefusalReason;
  /** The field as its road names it (`weight` on the cursor, `data.user.id` in a delivery). */
  readonly field: string;
  /** `<field>: <what is wrong> (got <a printable excerpt of the value>)`. */
  readonly message: string;
}

/** The fields of a vote as a road names them, for the messages. */
export interface VoteFieldNames {
  userId: string;
  platformId: string;
  weight: string;
  createdAt: string;
  expiresAt: string;
  /** The vote's own ID (deliveries only). */
  voteId?: string;
}

/** The values of those fields, the times already read with `Date.parse` (NaN: not a time). */
export interface VoteFieldValues {
  userId: unknown;
  platformId: unknown;
  weight: unknown;
  createdMs: number;
  expiresMs: number;
  voteId?: unknown;
}

/** How much of a refused string a message quotes. */
const EXCERPT_CHARACTERS = 24;
const PLATFORM_ID = new RegExp(`^\\d{1,${VOTE_FIELD_LIMITS.platformIdMaxDigits}}$`);
const SECOND = 1000;
const DAY_SECONDS = 24 * 60 * 60;

/** A value as a message quotes it: short and printable, never the whole of a long string. */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') {
    if (value.length <= EXCERPT_CHARACTERS) return `"${printable(value)}"`;
    return `${value.length} characters: "${printable(value.slice(0, EXCERPT_CHARACTERS))}..."`;
  }
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

const problem = (reason: VoteRefusalReason, field: string, message: string): VoteFieldProblem => ({
  reason,
  field,
  message: `${field}: ${message}`,
});

const iso = (ms: number) => new Date(ms).toISOString();

/** A service ID (user, project, vote): a Snowflake. */
export function snowflakeProblem(field: string, value: unknown): VoteFieldProblem | undefined {
  if (typeof value === 'string' && SNOWFLAKE_PATTERN.test(value)) return undefined;
  return problem('bad_vote_id', field, `must be a Snowflake, 17 to 20 digits (got ${describeValue(value)})`);
}

/** A platform ID: digits, at most {@link VOTE_FIELD_LIMITS}'s `platformIdMaxDigits`; `''` too when `empty` (the cursor: not carried). */
export function platformIdProblem(field: string, value: unknown, empty = false): VoteFieldProblem | undefined {
  if (typeof value === 'string' && (PLATFORM_ID.test(value) || (empty && value === ''))) return undefined;
  const digits = VOTE_FIELD_LIMITS.platformIdMaxDigits;
  return problem('bad_vote_id', field, `must be 1 to ${digits} digits${empty ? ' or empty' : ''} (got ${describeValue(value)})`);
}

/** `weight`: a whole number within the bounds. */
export function weightProblem(field: string, value: unknown): VoteFieldProblem | undefined {
  const { weightMin, weightMax } = VOTE_FIELD_LIMITS;
  if (typeof value === 'number' && Number.isInteger(value) && value >= weightMin && value <= weightMax) return undefined;
  return problem('bad_vote_weight', field, `must be a whole number from ${weightMin} to ${weightMax} (got ${describeValue(value)})`);
}

/** `expires_at` after `created_at`, by at most the longest lifetime. Both must be times already. */
export function lifetimeProblem(
  names: Pick<VoteFieldNames, 'createdAt' | 'expiresAt'>,
  createdMs: number,
  expiresMs: number,
): VoteFieldProblem | undefined {
  const inOrder = expiresMs > createdMs;
  if (inOrder && expiresMs - createdMs <= VOTE_FIELD_LIMITS.lifetimeMaxSeconds * SECOND) return undefined;
  // The message only for a vote refused: two toISOString per vote accepted cost more than the checks.
  const got = `got ${iso(expiresMs)}, ${names.createdAt} ${iso(createdMs)}`;
  if (!inOrder) return problem('bad_vote_time', names.expiresAt, `must be after ${names.createdAt} (${got})`);
  const maxDays = VOTE_FIELD_LIMITS.lifetimeMaxSeconds / DAY_SECONDS;
  const span = `must be at most ${maxDays} days after ${names.createdAt}: a vote lasts 12 h`;
  return problem('bad_vote_time', names.expiresAt, `${span} (${got})`);
}

/** `created_at` within the window around the agent's clock `nowMs`. */
export function createdAtProblem(field: string, createdMs: number, nowMs: number): VoteFieldProblem | undefined {
  const { createdAtMaxFutureSeconds, createdAtMaxAgeSeconds } = VOTE_FIELD_LIMITS;
  if (createdMs - nowMs > createdAtMaxFutureSeconds * SECOND) {
    const ahead = `more than ${createdAtMaxFutureSeconds / 60} minutes ahead of this machine's clock (${iso(nowMs)})`;
    return problem('bad_vote_time', field, `must not be ${ahead}: check both clocks (got ${iso(createdMs)})`);
  }
  if (nowMs - createdMs > createdAtMaxAgeSeconds * SECOND) {
    const days = createdAtMaxAgeSeconds / DAY_SECONDS;
    return problem('bad_vote_time', field, `must not be more than ${days} days old (got ${iso(createdMs)})`);
  }
  return undefined;
}

/** A vote for `got` where the agent's project is `expected`. */
export function projectProblem(field: string, got: string, expected: string): VoteFieldProblem | undefined {
  return got === expected ? undefined : problem('other_project', field, `${printable(got)} is not this agent's project (${expected})`);
}

/**
 * The first rule a vote's fields break (IDs, then the weight, then the times' order and span), or
 * undefined. `created_at` against the clock is {@link createdAtProblem}'s, where the clock is.
 */
export function voteFieldsProblem(
  values: VoteFieldValues,
  names: VoteFieldNames,
  options: { emptyPlatformId?: boolean } = {},
): VoteFieldProblem | undefined {
  return (
    snowflakeProblem(names.userId, values.userId) ??
    platformIdProblem(names.platformId, values.platformId, options.emptyPlatformId === true) ??
    (names.voteId === undefined ? undefined : snowflakeProblem(names.voteId, values.voteId)) ??
    weightProblem(names.weight, values.weight) ??
    lifetimeProblem(names, values.createdMs, values.expiresMs)
  );
}
