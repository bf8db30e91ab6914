import { DECISION_DEFAULTS } from '../../contract/limits.js';
import { voteKey } from '../../contract/vote.js';
import type { ReminderInfo } from '../../runtime/votes.js';
import type { Vote, VoteRoad } from '../types.js';

/*
 * The reminders as plain records, pure: what a reminder keeps of its vote, the vote its hooks
 * get, what the status page and the CLI show, and the schedule itself: a Map by project and
 * voter, one reminder each (a newer vote of the voter replaces the older one's), due at the
 * vote's expiry plus `votes.reminders.delay`. No timer, no file, no clock of its own: every call
 * that needs the time is given it.
 */

/** A vote's lifetime when the vote carries no usable `expires_at` (decisions.md: 12 h). */
const VOTE_LIFETIME_MS = DECISION_DEFAULTS.voteExpirySeconds * 1000;

/** A scheduled reminder: what it needs of its vote. */
export interface ReminderRecord {
  projectId: string;
  userId: string;
  /** Epoch ms of the vote (its key's ms, see {@link recordOfVote}). */
  createdMs: number;
  /** Epoch ms when the user may vote again. */
  expiresMs: number;
  platformId: string | null;
  weight: number;
  road: VoteRoad;
}

/**
 * The vote's time: its key's ms when the key is its voter's `<user_id>:<ms>` (every vote the roads
 * make), so that the reminder's key is `reminder:` + the vote's key even for a vote fed by hand
 * whose key and `createdAt` disagree; else its `createdAt`.
 */
function createdMsOf(vote: Vote): number {
  const ms = vote.key.slice(vote.userId.length + 1);
  return vote.key.startsWith(`${vote.userId}:`) && /^\d{1,15}$/.test(ms) ? Number(ms) : Date.parse(vote.createdAt);
}

/** The reminder of a vote, whatever the time (undefined: the vote has no valid date). */
export function recordOfVote(vote: Vote): ReminderRecord | undefined {
  const createdMs = createdMsOf(vote);
  if (!Number.isFinite(createdMs)) return undefined;
  const expires = Date.parse(vote.expiresAt);
  const expiresMs = Number.isFinite(expires) ? expires : createdMs + VOTE_LIFETIME_MS;
  const { projectId, userId, platformId, weight, road } = vote;
  return { projectId, userId, createdMs, expiresMs, platformId, weight, road };
}

/**
 * The vote a reminder's hooks get: the reminded vote, keyed `reminder:<vote key>` (its
 * idempotency key, distinct from the reward's), its `expiresAt` the vote's.
 */
export function reminderVote(record: ReminderRecord): Vote {
  return {
    key: `reminder:${voteKey(record.userId, record.createdMs)}`,
    userId: record.userId,
    platformId: record.platformId,
    projectId: record.projectId,
    weight: record.weight,
    createdAt: new Date(record.createdMs).toISOString(),
    expiresAt: new Date(record.expiresMs).toISOString(),
    road: record.road,
  };
}

/** One reminder, as the status page and the CLI list them (declared in the runtime, below both). */
export type { ReminderInfo };

/** What the status page and the CLI show of a reminder due at `due`. */
export function recordInfo(record: ReminderRecord, due: number): ReminderInfo {
  return {
    voteKey: voteKey(record.userId, record.createdMs),
    userId: record.userId,
    platformId: record.platformId,
    projectId: record.projectId,
    expiresAt: new Date(record.expiresMs).toISOString(),
    dueAt: new Date(due).toISOString(),
  };
}

/** A reminder and when it is due (its vote's expiry plus `votes.reminders.delay`). */
export interface DueReminder {
  record: ReminderRecord;
  due: number;
}

/** What {@link ReminderSchedule.put} did. */
type PutResult =
  /** A new reminder. */
  | 'scheduled'
  /** It replaced (superseded) the reminder of an older vote of the same voter. */
  | 'replaced'
  /** Nothing: the voter's reminder is for this vote or a newer one already. */
  | 'known';

/** The schedule: at most one reminder per voter and project, each due at its expiry + the delay. */
export interface ReminderSchedule {
  /** `votes.reminders.delay`. */
  readonly delayMs: number;
  readonly size: number;
  /** Schedules a reminder, whatever the time (replayed, or handed back when it could not be sent). */
  put(record: ReminderRecord): PutResult;
  /** Removes the voter's reminder when it is still the one of the vote created at `createdMs`; true when removed. */
  remove(projectId: string, userId: string, createdMs: number): boolean;
  /** Every reminder due at `now`, soonest first (they stay until removed). */
  due(now: number): DueReminder[];
  /** When the next reminder is due (epoch ms), or undefined when none is scheduled. */
  nextDue(): number | undefined;
  dueOf(record: Pick<ReminderRecord, 'expiresMs'>): number;
  /** The first `limit` reminders by due time (default all), soonest first. */
  list(limit?: number): DueReminder[];
  /** Every reminder scheduled, in no particular order. */
  records(): ReminderRecord[];
  clear(): void;
}

/** Soonest due first; then the older vote, then by voter: one order for every listing. */
function before(a: ReminderRecord, b: ReminderRecord): boolean {
  if (a.expiresMs !== b.expiresMs) return a.expiresMs < b.expiresMs;
  if (a.createdMs !== b.createdMs) return a.createdMs < b.createdMs;
  return a.userId === b.userId ? a.projectId < b.projectId : a.userId < b.userId;
}

const byDue = (a: ReminderRecord, b: ReminderRecord) => (before(a, b) ? -1 : before(b, a) ? 1 : 0);

/** The first `limit` records by due time, in a pass that keeps the best so far in order: no sort of them all. */
function first(records: Iterable<ReminderRecord>, limit: number): ReminderRecord[] {
  const best: ReminderRecord[] = [];
  for (const record of records) {
    if (best.length >= limit && !before(record, best[best.length - 1]!)) continue;
    let at = best.length;
    while (at > 0 && before(record, best[at - 1]!)) at -= 1;
    best.splice(at, 0, record);
    if (best.length > limit) best.pop();
  }
  return best;
}

/** Creates an empty schedule. */
export function createReminderSchedule(delayMs = 0): ReminderSchedule {
  const byProject = new Map<string, Map<string, ReminderRecord>>();
  let size = 0;
  /** The soonest expiry held, or undefined once it may be stale (read again by the next {@link nextDue}). */
  let soonest: number | undefined = Number.POSITIVE_INFINITY;
  function* all(): Generator<ReminderRecord> {
    for (const voters of byProject.values()) yield* voters.values();
  }
  const schedule: ReminderSchedule = {
    delayMs,
    get size() {
      return size;
    },
    put(record) {
      let voters = byProject.get(record.projectId);
      if (voters === undefined) byProject.set(record.projectId, (voters = new Map()));
      const old = voters.get(record.userId);
      if (old !== undefined && old.createdMs >= record.createdMs) return 'known';
      voters.set(record.userId, { ...record });
      if (old === undefined) size += 1;
      else if (old.expiresMs === soonest) soonest = undefined;
      if (soonest !== undefined && record.expiresMs < soonest) soonest = record.expiresMs;
      return old === undefined ? 'scheduled' : 'replaced';
    },
    remove(projectId, userId, createdMs) {
      const voters = byProject.get(projectId);
      const old = voters?.get(userId);
      if (old?.createdMs !== createdMs) return false;
      voters!.delete(userId);
      size -= 1;
      if (old.expiresMs === soonest) soonest = undefined;
      return true;
    },
    due(now) {
      const due: ReminderRecord[] = [];
      for (const record of all()) if (record.expiresMs + delayMs <= now) due.push(record);
      return due.sort(byDue).map((record) => ({ record: { ...record }, due: record.expiresMs + delayMs }));
    },
    nextDue() {
      if (soonest === undefined) {
        soonest = Number.POSITIVE_INFINITY;
        for (const record of all()) soonest = Math.min(soonest, record.expiresMs);
      }
      return soonest === Number.POSITIVE_INFINITY ? undefined : soonest + delayMs;
    },
    dueOf: (record) => record.expiresMs + delayMs,
    list: (limit = Number.POSITIVE_INFINITY) =>
      first(all(), limit).map((record) => ({ due: record.expiresMs + delayMs, record: { ...record } })),
    records: () => [...all()].map((record) => ({ ...record })),
    clear() {
      byProject.clear();
      size = 0;
      soonest = Number.POSITIVE_INFINITY;
    },
  };
  return schedule;
}
