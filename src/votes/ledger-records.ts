import type { DeadLetter, Vote } from './types.js';

/**
 * One line of the vote journal (`votes.journal`): `JSON.stringify` of a record object. The first
 * five kinds are appended as things happen; `k` and `e` only appear in a snapshot written by
 * compaction, where they stand for everything that came before.
 *
 * This is format version 1, the format 0.1.0 wrote and reads, so an agent can go back to 0.1.0 on
 * the same state directory. Version 2 (written by the versions between, with vote records as
 * JSON arrays and the vote reminders' records riding the journal) is still read: its `p`, `h` and
 * `c` arrays as the records they stand for, its reminder records as `r`, which the ledger ignores
 * and the reminders carry over into their own journal once (`reminders/carry-over.ts`). A
 * version 2 journal is rewritten under the version 1 header at open.
 */
export type JournalRecord =
  /** A vote recorded as pending (its hooks are due). */
  | { t: 'p'; v: Vote }
  /** Hook `h` succeeded for key `k`. */
  | { t: 'h'; k: string; h: string }
  /** Every hook is finished (succeeded or dead-lettered) for key `k`. */
  | { t: 'c'; k: string }
  /** Hook `l.hook` gave up on `l.key`. */
  | { t: 'd'; l: DeadLetter }
  /** The dead letter of hook `h` for key `k` was taken for a replay: the vote is pending again. */
  | { t: 'x'; k: string; h: string }
  /** Snapshot: a finished key kept for dedupe, whose vote expires at `e` (epoch ms). */
  | { t: 'k'; k: string; e: number }
  /** Snapshot: a vote still pending, or finished with dead letters outstanding. */
  | { t: 'e'; v: Vote; done: string[]; dl: string[]; c: boolean }
  /** Read only, from a version 2 journal: a record of the vote reminders (`["r",...f]`). Never written. */
  | { t: 'r'; f: readonly unknown[] };

/** The first line of every journal written now. */
export const JOURNAL_HEADER = { t: 'journal', format: 'listing-agent votes', version: 1 } as const;

/** The newest version this one reads; a journal of a later version is refused rather than misread. */
const NEWEST_READ = 2;

type Fields = Record<string, unknown>;

const isObject = (value: unknown): value is Fields => typeof value === 'object' && value !== null && !Array.isArray(value);
const isString = (value: unknown): value is string => typeof value === 'string';
const isStringArray = (value: unknown): value is string[] => Array.isArray(value) && value.every(isString);
const isNullableString = (value: unknown) => value === null || isString(value);

/** Checks the fields the ledger and the hooks rely on; unknown extra fields are kept (newer writers). */
function isVote(value: unknown): value is Vote {
  if (!isObject(value)) return false;
  return (
    isString(value.key) &&
    isString(value.userId) &&
    isNullableString(value.platformId) &&
    isString(value.projectId) &&
    typeof value.weight === 'number' &&
    isString(value.createdAt) &&
    isString(value.expiresAt) &&
    (value.road === 'poll' || value.road === 'webhook')
  );
}

function isDeadLetter(value: unknown): value is DeadLetter {
  if (!isObject(value)) return false;
  return (
    isString(value.key) &&
    isString(value.hook) &&
    isVote(value.vote) &&
    typeof value.attempts === 'number' &&
    isString(value.error) &&
    isString(value.failedAt)
  );
}

/** Reads one journal line; `undefined` when it is not a record this version understands. */
export function parseRecord(line: string): JournalRecord | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (Array.isArray(value)) return parseVersion2(value);
  if (!isObject(value)) return undefined;
  switch (value.t) {
    case 'p':
      return isVote(value.v) ? { t: 'p', v: value.v } : undefined;
    case 'h':
    case 'x':
      return isString(value.k) && isString(value.h) ? { t: value.t, k: value.k, h: value.h } : undefined;
    case 'c':
      return isString(value.k) ? { t: 'c', k: value.k } : undefined;
    case 'd':
      return isDeadLetter(value.l) ? { t: 'd', l: value.l } : undefined;
    case 'k':
      return isString(value.k) && typeof value.e === 'number' ? { t: 'k', k: value.k, e: value.e } : undefined;
    case 'e':
      return isVote(value.v) && isStringArray(value.done) && isStringArray(value.dl) && typeof value.c === 'boolean'
        ? { t: 'e', v: value.v, done: value.done, dl: value.dl, c: value.c }
        : undefined;
    default:
      return undefined;
  }
}

/** What the header line says: a version this one reads (perhaps not the one it writes), a newer one, or no header at all. */
export function readHeader(line: string): { kind: 'ours'; version: number } | { kind: 'newer'; version: number } | { kind: 'none' } {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { kind: 'none' };
  }
  if (!isObject(value) || value.t !== JOURNAL_HEADER.t || typeof value.version !== 'number') return { kind: 'none' };
  return value.version > NEWEST_READ ? { kind: 'newer', version: value.version } : { kind: 'ours', version: value.version };
}

/** The line of a record, newline included. */
export const recordLine = (record: JournalRecord | typeof JOURNAL_HEADER): string => `${JSON.stringify(record)}\n`;

/**
 * A version 2 line: `["p",key,userId,platformId,projectId,weight,createdAt,expiresAt,road,voteId,
 * userName,userAvatarUrl]` (road 0 poll, 1 webhook; the last three left out when the vote had
 * none; a key `<userId>:<ms>` written as the number ms), `["h",key,hook]`, `["c",key]`, or a
 * reminder record `["r",...]`.
 */
function parseVersion2(fields: readonly unknown[]): JournalRecord | undefined {
  switch (fields[0]) {
    case 'p': {
      const vote = version2Vote(fields);
      return vote === undefined ? undefined : { t: 'p', v: vote };
    }
    case 'h':
      return fields.length === 3 && isString(fields[1]) && isString(fields[2]) ? { t: 'h', k: fields[1], h: fields[2] } : undefined;
    case 'c':
      return fields.length === 2 && isString(fields[1]) ? { t: 'c', k: fields[1] } : undefined;
    case 'r':
      return fields.length >= 2 && isString(fields[1]) ? { t: 'r', f: fields.slice(1) } : undefined;
    default:
      return undefined;
  }
}

function version2Vote(f: readonly unknown[]): Vote | undefined {
  if (f.length !== 9 && f.length !== 10 && f.length !== 12) return undefined;
  const [, keyField, userId, platformId, projectId, weight, createdAt, expiresAt, road] = f;
  if (!isString(userId) || (road !== 0 && road !== 1)) return undefined;
  const key = typeof keyField === 'number' && Number.isSafeInteger(keyField) && keyField >= 0 ? `${userId}:${keyField}` : keyField;
  const roadName = road === 1 ? 'webhook' : 'poll';
  const vote: Record<string, unknown> = { key, userId, platformId, projectId, weight, createdAt, expiresAt, road: roadName };
  if (f.length >= 10 && f[9] !== null) vote.voteId = f[9];
  if (f.length === 12) vote.user = { name: f[10], avatarUrl: f[11] };
  if (vote.voteId !== undefined && !isString(vote.voteId)) return undefined;
  if (f.length === 12 && !(isNullableString(f[10]) && isNullableString(f[11]))) return undefined;
  return isVote(vote) ? vote : undefined;
}
