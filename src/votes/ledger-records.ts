import type { DeadLetter, Vote } from './types.js';
import { isKeyOfUser } from '../contract/vote-key.js';

/**
 * One line of the vote journal (`votes.journal`), as JSON. The first four kinds are appended as
 * things happen; `k` and `e` only appear in a snapshot written by compaction, where they stand
 * for everything that came before.
 *
 * Version 2 writes the records of every vote (`p`, `h`, `c`) as JSON arrays without field names
 * (see {@link pendingLine}): 188 bytes per vote instead of 297 for a polled vote with one hook.
 * Version 1 wrote them as objects (`{"t":"p","v":{...}}`); both forms replay.
 */
export type JournalRecord =
  /**
   * A vote recorded as pending (its hooks are due). `line` is its journal line when known
   * ({@link pendingLine}): the ledger keeps that string rather than the vote object, so nothing a
   * caller or a hook does to the vote later changes what the ledger holds.
   */
  | { t: 'p'; v: Vote; line?: string }
  /** Hook `h` succeeded for key `k`. */
  | { t: 'h'; k: string; h: string }
  /** Every hook is finished (succeeded or dead-lettered) for key `k`. */
  | { t: 'c'; k: string }
  /** Hook `l.hook` gave up on `l.key`. */
  | { t: 'd'; l: DeadLetter }
  /** The dead letter of hook `h` for key `k` was taken for a replay: the vote is pending again. */
  | { t: 'x'; k: string; h: string }
  /** Snapshot: a finished key kept for dedupe, whose vote expires at `e` (epoch ms, rounded up to the minute). */
  | { t: 'k'; k: string; e: number }
  /** Snapshot: a vote still pending, or finished with dead letters outstanding. */
  | { t: 'e'; v: Vote; done: string[]; dl: string[]; c: boolean }
  /**
   * A record of the ledger's companion (`ledger-companion.ts`: the vote reminders), written as
   * `["r",...f]`: the ledger keeps no state of it, only replays it to the companion in order.
   */
  | { t: 'r'; f: readonly unknown[] };

/**
 * The first line of every journal; a newer `version` is refused rather than misread. A journal of
 * an older version is rewritten (compacted) at open, so an array line never follows a version 1
 * header, which an older agent would take for damage.
 */
export const JOURNAL_HEADER = { t: 'journal', format: 'listing-agent votes', version: 2 } as const;

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
  if (Array.isArray(value)) return parseArrayRecord(value);
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

/** What the header line says: ours (this version or older), a newer version, or not a header at all. */
export function readHeader(line: string): { kind: 'ours'; version: number } | { kind: 'newer'; version: number } | { kind: 'none' } {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { kind: 'none' };
  }
  if (!isObject(value) || value.t !== JOURNAL_HEADER.t || typeof value.version !== 'number') return { kind: 'none' };
  return value.version > JOURNAL_HEADER.version ? { kind: 'newer', version: value.version } : { kind: 'ours', version: value.version };
}

/** The line of a record, newline included: the array form for a vote's records, JSON objects for the rest. */
export function recordLine(record: JournalRecord | typeof JOURNAL_HEADER): string {
  switch (record.t) {
    case 'p':
      return record.line ?? pendingLine(record.v);
    case 'c':
      return `["c",${JSON.stringify(record.k)}]\n`;
    case 'h':
      return `["h",${JSON.stringify(record.k)},${JSON.stringify(record.h)}]\n`;
    case 'r':
      return `${JSON.stringify(['r', ...record.f])}\n`;
    default:
      return `${JSON.stringify(record)}\n`;
  }
}

/** A key's part after `<userId>:` when it is the vote's creation in epoch ms, printed as a JSON number. */
const MS_SUFFIX = /^(?:0|[1-9][0-9]{0,14})$/;

/**
 * A string JSON writes as it is between quotes: no quote, backslash or control character, and no
 * surrogate (`JSON.stringify` escapes a lone one; the rare pair goes that way too).
 */
const PLAIN = /^[^"\\\u0000-\u001f\ud800-\udfff]*$/;

/** `JSON.stringify(value)` as an element of an array: a plain string without its scan and escape pass. */
const json = (value: unknown): string => (typeof value === 'string' && PLAIN.test(value) ? `"${value}"` : (JSON.stringify(value) ?? 'null'));

/**
 * The `p` line of a vote, newline included: `["p",key,userId,platformId,projectId,weight,createdAt,
 * expiresAt,road,voteId,userName,userAvatarUrl]`, with `road` 0 (poll) or 1 (webhook), the last
 * three left out when the vote has none of them, and `key` written as a number when it is
 * `<userId>:<ms>` (every vote the agent builds: `voteKey`), which it becomes again on replay.
 * Every field a hook gets is kept: a replayed vote is the vote that was recorded.
 *
 * The same text as `JSON.stringify` of that array (a property test holds them equal), put
 * together field by field: the line is made once per vote while the poller waits for the write
 * (`JSON.stringify` of the array took 1.9 µs of the bench's 20 per vote). The ms of the key is its
 * digits as they are, which are the number's own printing (canonical, at most 15 digits).
 */
export function pendingLine(vote: Vote): string {
  const { key, userId } = vote;
  let keyField = '';
  if (isKeyOfUser(key, userId)) {
    const suffix = key.slice(userId.length + 1);
    if (MS_SUFFIX.test(suffix)) keyField = suffix;
  }
  if (keyField === '') keyField = json(key);
  let line = `["p",${keyField},${json(userId)},${json(vote.platformId)},${json(vote.projectId)},${json(vote.weight)},${json(vote.createdAt)},${json(vote.expiresAt)},${vote.road === 'webhook' ? 1 : 0}`;
  if (vote.voteId !== undefined || vote.user !== undefined) line += `,${json(vote.voteId ?? null)}`;
  if (vote.user !== undefined) line += `,${json(vote.user.name)},${json(vote.user.avatarUrl)}`;
  return `${line}]\n`;
}

/** The vote of a `p` line in the array form; `undefined` when it is not one. */
function voteOfPendingFields(f: readonly unknown[]): Vote | undefined {
  if (f.length !== 9 && f.length !== 10 && f.length !== 12) return undefined;
  const [, keyField, userId, platformId, projectId, weight, createdAt, expiresAt, road] = f;
  if (!isString(userId) || (road !== 0 && road !== 1)) return undefined;
  const key = typeof keyField === 'number' && Number.isSafeInteger(keyField) && keyField >= 0 ? `${userId}:${keyField}` : keyField;
  const vote: Record<string, unknown> = { key, userId, platformId, projectId, weight, createdAt, expiresAt, road: road === 1 ? 'webhook' : 'poll' };
  if (f.length >= 10 && f[9] !== null) vote.voteId = f[9];
  if (f.length === 12) vote.user = { name: f[10], avatarUrl: f[11] };
  if (vote.voteId !== undefined && !isString(vote.voteId)) return undefined;
  if (f.length === 12 && !(isNullableString(f[10]) && isNullableString(f[11]))) return undefined;
  return isVote(vote) ? vote : undefined;
}

/** The vote of a line written by {@link pendingLine}. */
export function voteOfPendingLine(line: string): Vote {
  const record = parseRecord(line);
  if (record?.t !== 'p') throw new Error(`not a pending vote line: ${line.slice(0, 80)}`);
  return record.v;
}

/** A record in the array form (version 2: `p`, `h`, `c`, and the companion's `r`). */
function parseArrayRecord(fields: readonly unknown[]): JournalRecord | undefined {
  switch (fields[0]) {
    case 'p': {
      const vote = voteOfPendingFields(fields);
      // Not `line` itself: a slice of the journal's text would keep all of that text alive.
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
