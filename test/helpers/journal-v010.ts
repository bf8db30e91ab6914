/*
 * The vote journal's reader of listing-agent 0.1.0, copied as it was (src/votes/ledger-records.ts
 * at commit 80c5d81^, the last before journal format 2): what a bot that goes back to 0.1.0 makes
 * of a journal written by this version. A line it cannot read, 0.1.0 skips as damage (with a
 * warning, the journal set aside); a header of a version above 1 makes it refuse the journal.
 * Only the record shapes are checked here; test/unit/votes/journal-downgrade.test.ts says why.
 */

import type { DeadLetter, Vote } from '../../src/votes/types.js';

/**
 * One line of the vote journal (`votes.journal`), as JSON. Short field names because a busy bot
 * writes three of these per vote. The first four kinds are appended as things happen; `k` and `e`
 * only appear in a snapshot written by compaction, where they stand for everything that came before.
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
  /** Snapshot: a finished key kept for dedupe, whose vote expires at `e` (epoch ms, rounded up to the minute). */
  | { t: 'k'; k: string; e: number }
  /** Snapshot: a vote still pending, or finished with dead letters outstanding. */
  | { t: 'e'; v: Vote; done: string[]; dl: string[]; c: boolean };

/** The first line of every journal; a newer `version` is refused rather than misread. */
export const JOURNAL_HEADER = { t: 'journal', format: 'listing-agent votes', version: 1 } as const;

type Fields = Record<string, unknown>;

const isObject = (value: unknown): value is Fields => typeof value === 'object' && value !== null && !Array.isArray(value);
const isString = (value: unknown): value is string => typeof value === 'string';
const isStringArray = (value: unknown): value is string[] => Array.isArray(value) && value.every(isString);
const isNullableString = (value: unknown) => value === null || isString(value);

/** Checks the fields the ledger and the hooks rely on; unknown extra fields are kept (newer writers). */
export function isVote(value: unknown): value is Vote {
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

/** What the header line says: ours, a newer version, or not a header at all. */
export function readHeader(line: string): { kind: 'ours' } | { kind: 'newer'; version: number } | { kind: 'none' } {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { kind: 'none' };
  }
  if (!isObject(value) || value.t !== JOURNAL_HEADER.t || typeof value.version !== 'number') return { kind: 'none' };
  return value.version > JOURNAL_HEADER.version ? { kind: 'newer', version: value.version } : { kind: 'ours' };
}
