import { DECISION_DEFAULTS } from '../../contract/limits.js';
import { voteKey } from '../../contract/vote-key.js';
import type { Vote, VoteRoad } from '../types.js';
import type { ReminderInfo } from '../../runtime/votes.js';

/*
 * The reminder schedule's rules, pure: no timer, no file, no clock of its own (every call is
 * given `now`). One reminder per voter and project at most: a newer vote of the same user
 * replaces (supersedes) the older one's reminder. A reminder is kept as one string, its line (the
 * same text the journal stores), so 100 000 of them stay small; the order of due times is a
 * binary heap of entries, with replaced entries skipped lazily when they reach its top.
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

/** When the vote expires: its `expiresAt`, or created + the contract's vote lifetime when absent or malformed. */
function voteExpiryMs(vote: Pick<Vote, 'createdAt' | 'expiresAt'>): number {
  const expires = Date.parse(vote.expiresAt);
  if (Number.isFinite(expires)) return expires;
  return Date.parse(vote.createdAt) + VOTE_LIFETIME_MS;
}

const clean = (value: string) => (value.includes('\t') || value.includes('\n') ? value.replace(/[\t\n]/g, ' ') : value);

/**
 * The line of a vote's reminder: tab-separated project, user, created ms, expires ms, platform ID
 * (empty when unknown), weight, road. About 70 bytes. Undefined for a vote without a valid date.
 */
export function reminderLine(vote: Vote): string | undefined {
  const created = Date.parse(vote.createdAt);
  const expires = voteExpiryMs(vote);
  if (!Number.isFinite(created) || !Number.isFinite(expires)) return undefined;
  return [clean(vote.projectId), clean(vote.userId), created, expires, clean(vote.platformId ?? ''), vote.weight, vote.road].join('\t');
}

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

/** Which voter and project a line is for: the slot it holds (one reminder per slot). */
function reminderSlot(line: string): string {
  const second = line.indexOf('\t', line.indexOf('\t') + 1);
  return line.slice(0, second);
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
  const createdMs = Date.parse(vote.createdAt);
  const parsed = Date.parse(vote.expiresAt);
  const expiresMs = Number.isFinite(parsed) ? parsed : createdMs + VOTE_LIFETIME_MS;
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
  if (record === undefined) return undefined;
  return {
    voteKey: reminderVoteKey(record),
    userId: record.userId,
    platformId: record.platformId,
    projectId: record.projectId,
    expiresAt: new Date(record.expiresMs).toISOString(),
    dueAt: new Date(due).toISOString(),
  };
}

/** What {@link ReminderSchedule.add} did with a vote. */
type AddOutcome =
  /** Scheduled; `replaced` is the older reminder of the same voter it superseded. */
  | { result: 'scheduled'; replaced?: string }
  /** Not scheduled: the vote had expired when it arrived. */
  | { result: 'expired' }
  /** Not scheduled: the voter's reminder is for this vote or a newer one already. */
  | { result: 'known' }
  /** Not scheduled: the vote has no valid date. */
  | { result: 'invalid' };

/** What {@link ReminderSchedule.takeDue} took off the schedule. */
interface DueReminders {
  /** Due, and within `maxLateness`: to send. */
  send: string[];
  /** Due more than `maxLateness` ago: counted as skipped, not sent. */
  late: string[];
}

interface Entry {
  readonly due: number;
  readonly line: string;
}

/** Options of {@link createReminderSchedule}. */
export interface ReminderScheduleOptions {
  /** Added to a vote's expiry: `votes.reminders.delay`. Default 0. */
  delayMs?: number;
}

/** The schedule: at most one reminder per voter and project, ordered by due time. */
export interface ReminderSchedule {
  /** Schedules the reminder of `vote` as of `now` (see {@link AddOutcome}); `line` is what to store. */
  add(vote: Vote, now: number): AddOutcome & { line?: string };
  /** Puts back a stored line (at open): the same rules as `add`, but nothing is expired by age. */
  restore(line: string): AddOutcome;
  /** Removes `line` when it is still its voter's reminder; true when removed. */
  remove(line: string): boolean;
  /** Takes every reminder due at `now` off the schedule, split into those to send and those too late. */
  takeDue(now: number, maxLatenessMs: number): DueReminders;
  /** When the next reminder is due (epoch ms), or undefined when none is scheduled. */
  nextDue(): number | undefined;
  /** The due time of a line under this schedule's delay. */
  dueOf(line: string): number;
  /** The reminders scheduled, soonest first, at most `limit` (default all). */
  list(limit?: number): { due: number; line: string }[];
  /** Every line scheduled (for a compacted journal). */
  lines(): string[];
  readonly size: number;
}

/** Creates an empty {@link ReminderSchedule}. */
export function createReminderSchedule(options: ReminderScheduleOptions = {}): ReminderSchedule {
  const delayMs = options.delayMs ?? 0;
  const bySlot = new Map<string, Entry>();
  const heap: Entry[] = [];
  const dueOf = (line: string) => {
    const record = parseReminderLine(line);
    return record === undefined ? Number.NaN : record.expiresMs + delayMs;
  };
  const live = (entry: Entry) => bySlot.get(reminderSlot(entry.line)) === entry;
  const dropStale = () => {
    while (heap.length > 0 && !live(heap[0]!)) heapPop(heap);
  };
  const put = (line: string, record: Pick<ReminderRecord, 'createdMs' | 'expiresMs'>): AddOutcome => {
    const slot = reminderSlot(line);
    const existing = bySlot.get(slot);
    let replaced: string | undefined;
    if (existing !== undefined) {
      const old = parseReminderLine(existing.line);
      if (old !== undefined && old.createdMs >= record.createdMs) return { result: 'known' };
      replaced = existing.line;
    }
    const entry: Entry = { due: record.expiresMs + delayMs, line };
    bySlot.set(slot, entry);
    heapPush(heap, entry);
    // Replaced entries stay in the heap until they surface; rebuild when they outnumber the live ones.
    if (heap.length > 2 * bySlot.size + 1024) rebuild(heap, bySlot);
    return replaced === undefined ? { result: 'scheduled' } : { result: 'scheduled', replaced };
  };
  return {
    add(vote, now) {
      const made = reminderOf(vote, now, delayMs);
      if (typeof made === 'string') return { result: made };
      return { ...put(made.line, made), line: made.line };
    },
    restore(line) {
      const record = parseReminderLine(line);
      return record === undefined ? { result: 'invalid' } : put(line, record);
    },
    remove(line) {
      const slot = reminderSlot(line);
      if (bySlot.get(slot)?.line !== line) return false;
      bySlot.delete(slot);
      return true;
    },
    takeDue(now, maxLatenessMs) {
      const taken: DueReminders = { send: [], late: [] };
      dropStale();
      while (heap.length > 0 && heap[0]!.due <= now) {
        const entry = heapPop(heap)!;
        bySlot.delete(reminderSlot(entry.line));
        (now - entry.due > maxLatenessMs ? taken.late : taken.send).push(entry.line);
        dropStale();
      }
      return taken;
    },
    nextDue() {
      dropStale();
      return heap[0]?.due;
    },
    dueOf,
    list(limit = Number.POSITIVE_INFINITY) {
      return [...bySlot.values()]
        .sort((a, b) => a.due - b.due)
        .slice(0, limit)
        .map((entry) => ({ due: entry.due, line: entry.line }));
    },
    lines: () => [...bySlot.values()].map((entry) => entry.line),
    get size() {
      return bySlot.size;
    },
  };
}

function rebuild(heap: Entry[], bySlot: Map<string, Entry>): void {
  heap.length = 0;
  for (const entry of bySlot.values()) heapPush(heap, entry);
}

function heapPush(heap: Entry[], entry: Entry): void {
  heap.push(entry);
  let i = heap.length - 1;
  while (i > 0) {
    const parent = (i - 1) >> 1;
    if (heap[parent]!.due <= entry.due) break;
    heap[i] = heap[parent]!;
    i = parent;
  }
  heap[i] = entry;
}

function heapPop(heap: Entry[]): Entry | undefined {
  const top = heap[0];
  const last = heap.pop();
  if (heap.length === 0 || last === undefined) return top;
  let i = 0;
  for (;;) {
    const left = 2 * i + 1;
    if (left >= heap.length) break;
    const right = left + 1;
    const child = right < heap.length && heap[right]!.due < heap[left]!.due ? right : left;
    if (heap[child]!.due >= last.due) break;
    heap[i] = heap[child]!;
    i = child;
  }
  heap[i] = last;
  return top;
}
