import { DECISION_DEFAULTS } from '../../contract/limits.js';
import { isoInto, isoMs, lastIsoInto } from '../../contract/iso-time.js';
import { isKeyOfUser, lastVoteKeyInto, voteKey } from '../../contract/vote-key.js';
import type { Vote, VoteRoad } from '../types.js';
import type { ReminderInfo } from '../../runtime/votes.js';

/*
 * A reminder's record and its spellings, pure: the record (what a reminder needs of its vote),
 * the line Redis stores (tab-separated), the vote its hooks get, and what the status page and the
 * CLI show. The schedule itself (one reminder per voter and project, ordered by due time) is
 * `table.ts`.
 */

/** A vote's lifetime when the vote carries no usable `expires_at` (decisions.md: 12 h). */
const VOTE_LIFETIME_MS = DECISION_DEFAULTS.voteExpirySeconds * 1000;

/** The prefix of a reminder's idempotency key: `reminder:<vote key>`. */
const REMINDER_KEY_PREFIX = 'reminder:';

/** A scheduled reminder, as its line says. */
export interface ReminderRecord {
  projectId: string;
  userId: string;
  /** Epoch ms of the vote. */
  createdMs: number;
  /** Epoch ms when the user may vote again. */
  expiresMs: number;
  platformId: string | null;
  weight: number;
  road: VoteRoad;
}

/**
 * The parts of `vote`'s key (`lastVoteKeyInto`: its voter's ID as two numbers, the vote's ms) into
 * `out[at..at + 2]` when the key is its own user's (`<userId>:<ms>`, as `voteKey` makes it, with a
 * numeric user ID); false otherwise. Right after the file vote ledger read the same key, this is a
 * comparison, not a parse (and the ledger's own check of the key, next, is one too).
 */
export function voteKeyPartsInto(vote: Pick<Vote, 'key' | 'userId'>, out: Float64Array, at: number): boolean {
  return isKeyOfUser(vote.key, vote.userId) && lastVoteKeyInto(vote.key, out, at);
}

/** Scratch of {@link voteCreatedInto}. */
const PARTS = new Float64Array(3);

/**
 * The vote's time (epoch ms) into `out[at]`; false when it has none. The ms its key carries when
 * the key is its user's numeric one ({@link voteKeyPartsInto}: the same number as its `createdAt`,
 * from which the key was made, without reading the date again), else its `createdAt` read. Every
 * reader of a vote's time here goes through this, so the live schedule and a replay of the journal
 * agree even on a vote whose key and date would disagree, and a reminder's idempotency key is
 * always `reminder:` + its vote's key.
 */
export function voteCreatedInto(vote: Pick<Vote, 'key' | 'userId' | 'createdAt'>, out: Float64Array, at: number): boolean {
  if (voteKeyPartsInto(vote, PARTS, 0)) {
    out[at] = PARTS[2]!;
    return true;
  }
  return isoInto(vote.createdAt, out, at);
}

/** Scratch of {@link voteCreatedMs}. */
const CREATED = new Float64Array(1);

/** The vote's time (epoch ms, {@link voteCreatedInto}), or NaN when it has no valid date. */
const voteCreatedMs = (vote: Pick<Vote, 'key' | 'userId' | 'createdAt'>): number => (voteCreatedInto(vote, CREATED, 0) ? CREATED[0]! : Number.NaN);

/** When the vote expires (epoch ms): its `expiresAt`, or `createdMs` + the contract's vote lifetime when absent or malformed. */
function voteExpiresMs(vote: Pick<Vote, 'expiresAt'>, createdMs: number): number {
  const expires = isoMs(vote.expiresAt);
  return Number.isFinite(expires) ? expires : createdMs + VOTE_LIFETIME_MS;
}

/**
 * {@link voteExpiresMs} into `out[at]`, reading the vote's time only when it is needed; false when
 * the vote has no valid date. (A typed array: no heap number per call on the ingestion path.) The
 * file vote ledger reads the same `expiresAt` right after (`expiresAtMs`): `lastIsoInto` parses
 * it once for both.
 */
export function voteExpiryInto(vote: Pick<Vote, 'key' | 'userId' | 'createdAt' | 'expiresAt'>, out: Float64Array, at: number): boolean {
  if (lastIsoInto(vote.expiresAt, out, at)) return true;
  if (!voteCreatedInto(vote, out, at)) return false;
  out[at] = out[at]! + VOTE_LIFETIME_MS;
  return true;
}

/** The reminder of a vote, whatever the time (undefined: no valid date). */
export function recordOfVote(vote: Vote): ReminderRecord | undefined {
  const createdMs = voteCreatedMs(vote);
  const expiresMs = voteExpiresMs(vote, createdMs);
  if (!Number.isFinite(createdMs) || !Number.isFinite(expiresMs)) return undefined;
  return { projectId: vote.projectId, userId: vote.userId, createdMs, expiresMs, platformId: vote.platformId, weight: vote.weight, road: vote.road };
}

const clean = (value: string) => (value.includes('\t') || value.includes('\n') ? value.replace(/[\t\n]/g, ' ') : value);

/** The record of a line, or undefined when it is not one (a damaged journal line). */
export function parseReminderLine(line: string): ReminderRecord | undefined {
  const parts = line.split('\t');
  if (parts.length !== 7) return undefined;
  const [projectId, userId, created, expires, platformId, weight, road] = parts as [string, string, string, string, string, string, string];
  const record: ReminderRecord = {
    projectId,
    userId,
    createdMs: Number(created),
    expiresMs: Number(expires),
    platformId: platformId === '' ? null : platformId,
    weight: Number(weight),
    road: road === 'webhook' ? 'webhook' : 'poll',
  };
  if (projectId === '' || userId === '' || !Number.isFinite(record.createdMs) || !Number.isFinite(record.expiresMs) || !Number.isFinite(record.weight)) return undefined;
  return record;
}

/** The vote key of the vote a line reminds of (`<user_id>:<created_at ms>`). */
function reminderVoteKey(record: ReminderRecord): string {
  return voteKey(record.userId, record.createdMs);
}

/**
 * The vote a reminder's hooks get: the reminded vote, keyed `reminder:<vote key>` (its
 * idempotency key, distinct from the reward's), its `expiresAt` the vote's.
 */
export function reminderVote(record: ReminderRecord): Vote {
  return {
    key: REMINDER_KEY_PREFIX + reminderVoteKey(record),
    userId: record.userId,
    platformId: record.platformId,
    projectId: record.projectId,
    weight: record.weight,
    createdAt: new Date(record.createdMs).toISOString(),
    expiresAt: new Date(record.expiresMs).toISOString(),
    road: record.road,
  };
}

/** A vote's reminder, made: its line, its slot (voter and project), the vote's time and when it is due. */
export interface MadeReminder {
  line: string;
  slot: string;
  createdMs: number;
  expiresMs: number;
  due: number;
}

/** The reminder of `vote` as of `now`, or why there is none: `expired` (arrived expired), `invalid` (no valid date). */
export function reminderOf(vote: Vote, now: number, delayMs: number): MadeReminder | 'expired' | 'invalid' {
  const createdMs = voteCreatedMs(vote);
  const expiresMs = voteExpiresMs(vote, createdMs);
  if (!Number.isFinite(createdMs) || !Number.isFinite(expiresMs)) return 'invalid';
  if (expiresMs <= now) return 'expired';
  const slot = `${clean(vote.projectId)}\t${clean(vote.userId)}`;
  const line = `${slot}\t${createdMs}\t${expiresMs}\t${clean(vote.platformId ?? '')}\t${vote.weight}\t${vote.road}`;
  return { line, slot, createdMs, expiresMs, due: expiresMs + delayMs };
}

/** One reminder, as the status page and the CLI list them (declared in the runtime, below both). */
export type { ReminderInfo };

/** What the status page and the CLI show of a line due at `due` (undefined: a damaged line). */
export function reminderInfo(line: string, due: number): ReminderInfo | undefined {
  const record = parseReminderLine(line);
  return record === undefined ? undefined : recordInfo(record, due);
}

/** What the status page and the CLI show of a reminder due at `due`. */
export function recordInfo(record: ReminderRecord, due: number): ReminderInfo {
  return {
    voteKey: reminderVoteKey(record),
    userId: record.userId,
    platformId: record.platformId,
    projectId: record.projectId,
    expiresAt: new Date(record.expiresMs).toISOString(),
    dueAt: new Date(due).toISOString(),
  };
}
