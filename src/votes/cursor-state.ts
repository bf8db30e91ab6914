import type { InvalidVoteRecord, VoteRecord, VotesPage } from '../api/schemas/votes.js';
import { CONTRACT_LIMITS } from '../contract/limits.js';
import { createdAtProblem } from '../contract/vote-fields.js';
import { type Vote, voteKey } from './types.js';

/**
 * The poller's checkpoint per project, as pure functions: what is stored, where the next request
 * starts, and how a page moves the checkpoint. Nothing here does I/O.
 */

/** What the store keeps per project under {@link cursorStateKey}. */
export interface CursorState {
  /** The cursor of the last page whose votes are all durably in the pipeline; null before the first page. */
  cursor: string | null;
  /** `created_at` (ISO 8601) of the newest vote seen so far: where an invalid cursor falls back to. */
  newestCreatedAt: string | null;
  /** The key of that vote (for logs, and to tell what the fallback replays). */
  newestKey: string | null;
  /**
   * The `startDate` (ISO 8601) the first poll listed from: where a refused cursor goes back to
   * while no vote was seen yet. Null in a checkpoint written before it was kept.
   */
  startDate: string | null;
}

/** The store key prefix of the checkpoints. */
export const CURSOR_KEY_PREFIX = 'votes:cursor:';

/**
 * How far inside the contract's one-year limit a `startDate` is kept, so that a clock a little
 * ahead of the service's (or a slow request) never turns a bootstrap into a 400.
 */
const START_DATE_MARGIN_MS = 60 * 60 * 1000;

/**
 * How far back a refused cursor goes when its checkpoint knows neither a vote nor its first poll's
 * `startDate` (written before that was kept): 12 hours, a vote's lifetime, as those versions'
 * own first poll did.
 */
const UNKNOWN_START_LOOKBACK_MS = 12 * 60 * 60 * 1000;

/** The store key of a project's checkpoint: `votes:cursor:<service project ID>`. */
export function cursorStateKey(projectId: string): string {
  return `${CURSOR_KEY_PREFIX}${projectId}`;
}

const isStringOrNull = (value: unknown): value is string | null => value === null || typeof value === 'string';

/** Reads a stored checkpoint; undefined when there is none or it is not one (then the poller bootstraps). */
export function parseCursorState(raw: unknown): CursorState | undefined {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return undefined;
  const { cursor, newestCreatedAt, newestKey, startDate = null } = raw as Record<string, unknown>;
  if (!isStringOrNull(cursor) || !isStringOrNull(newestCreatedAt) || !isStringOrNull(newestKey)) return undefined;
  if (cursor === '' || (newestCreatedAt !== null && Number.isNaN(Date.parse(newestCreatedAt)))) return undefined;
  // A start that is not a date is only forgotten: the checkpoint itself still holds.
  const start = typeof startDate === 'string' && !Number.isNaN(Date.parse(startDate)) ? startDate : null;
  return { cursor, newestCreatedAt, newestKey, startDate: start };
}

/** The earliest `startDate` the service takes at `nowMs`, less {@link START_DATE_MARGIN_MS}. */
export function earliestStartDate(nowMs: number): number {
  return nowMs - CONTRACT_LIMITS.votesStartDateMaxAgeSeconds * 1000 + START_DATE_MARGIN_MS;
}

/** Where a project's first poll starts (no checkpoint yet): `lookback` before the agent's start. */
export interface FirstPoll {
  /** Epoch ms of the agent's start: votes cast from then on are rewarded. */
  startedAt: number;
  /** How far before `startedAt` the first poll lists (`votes.lookback`; 0: none). */
  lookbackMs: number;
}

/** `startDate` of a first poll: `startedAt - lookback`, clamped to the one-year limit at `nowMs`. */
export function firstPollStartDate(first: FirstPoll, nowMs: number): Date {
  return new Date(Math.max(first.startedAt - Math.max(0, first.lookbackMs), earliestStartDate(nowMs)));
}

/**
 * `startDate` after the service refused a cursor: the newest vote already seen, inclusive (the
 * pipeline drops the overlap as duplicates), never later, so nothing in between is missed. With
 * nothing seen yet, where the first poll started (so a first start that skipped the votes before
 * it does not reward them now); for a checkpoint that does not know it, 12 hours back. Only a time
 * older than the one-year limit is clamped: the service cannot list from there, and such a vote
 * expired long ago.
 */
export function fallbackStartDate(state: CursorState | undefined, nowMs: number): Date {
  const newest = state?.newestCreatedAt ?? state?.startDate;
  const from = newest == null ? Number.NaN : Date.parse(newest);
  return new Date(Math.max(Number.isNaN(from) ? nowMs - UNKNOWN_START_LOOKBACK_MS : from, earliestStartDate(nowMs)));
}

/** Where the next request of a poll starts: the stored cursor, else a first poll's `startDate`. */
export function resumeFrom(state: CursorState | undefined, first: FirstPoll, nowMs: number): { cursor: string } | { startDate: Date } {
  return state?.cursor ? { cursor: state.cursor } : { startDate: firstPollStartDate(first, nowMs) };
}

/** A vote of the cursor as the pipeline takes it (road `poll`), its times in `toISOString`'s spelling. */
export function voteFromRecord(record: VoteRecord, projectId: string): Vote {
  const createdMs = Date.parse(record.created_at);
  return {
    key: voteKey(record.user_id, createdMs),
    userId: record.user_id,
    platformId: record.platform_id === '' ? null : record.platform_id,
    projectId,
    weight: record.weight,
    // Not a date: `toISOString` throws a RangeError (the schema lets none through).
    createdAt: new Date(createdMs).toISOString(),
    expiresAt: new Date(Date.parse(record.expires_at)).toISOString(),
    road: 'poll',
  };
}

/**
 * The votes of a page the pipeline takes, and the records refused: those the page schema left
 * out (`page.invalid`: a wrong type, an ID, weight or lifetime out of bounds) and those whose
 * `created_at` is out of the window around `nowMs`. A refused record never costs the others of
 * its page, and the cursor moves past it all the same (it would be refused again at every poll).
 */
export function votesOfPage(page: VotesPage, projectId: string, nowMs: number): { votes: Vote[]; refused: InvalidVoteRecord[] } {
  const votes: Vote[] = [];
  const refused: InvalidVoteRecord[] = [...(page.invalid ?? [])];
  const left = new Set(refused.map((record) => record.index));
  // Each record's position as the service sent it: `data` is without the records left out.
  let index = 0;
  for (const record of page.data) {
    while (left.has(index)) index += 1;
    const problem = createdAtProblem('created_at', Date.parse(record.created_at), nowMs);
    if (problem === undefined) votes.push(voteFromRecord(record, projectId));
    else refused.push({ index, ...problem });
    index += 1;
  }
  return { votes, refused: refused.sort((a, b) => a.index - b.index) };
}

/**
 * The checkpoint once every vote of a page is durably in the pipeline: the page's cursor, and
 * the newest of its votes (pages are in ascending order, but the newest is found, not assumed).
 * `startDate` is the first poll's: kept from `state`, else the `startDate` this page was listed from.
 */
export function advanceCursorState(
  state: CursorState | undefined,
  page: { cursor: string; votes: readonly Vote[]; startDate?: Date },
): CursorState {
  let newestCreatedAt = state?.newestCreatedAt ?? null;
  let newestKey = state?.newestKey ?? null;
  let newestMs = newestCreatedAt === null ? Number.NEGATIVE_INFINITY : Date.parse(newestCreatedAt);
  for (const vote of page.votes) {
    const ms = Date.parse(vote.createdAt);
    if (ms >= newestMs) {
      newestMs = ms;
      newestCreatedAt = vote.createdAt;
      newestKey = vote.key;
    }
  }
  return { cursor: page.cursor, newestCreatedAt, newestKey, startDate: state?.startDate ?? page.startDate?.toISOString() ?? null };
}
