import type { LedgerCompanion } from '../ledger-companion.js';
import type { JournalRecord } from '../ledger-records.js';
import type { ReminderStore } from './reminders.js';
import type { Vote } from '../types.js';
import { recordOfVote, voteExpiryInto, voteKeyPartsInto, type ReminderRecord } from './schedule.js';
import { ReminderTable, type VoteBatch } from './table.js';

/*
 * The reminder schedule kept in a file vote ledger's journal, as its companion (see
 * `LedgerCompanion`): no file, no write and no fsync of its own.
 *
 * Beside the rewards' ledger (`<state.directory>/votes.journal`, `derive`), a reminder needs no
 * record at all: the vote's own `p` record, already durable before the vote is acknowledged, is
 * the reminder's. At open, every vote recorded while the journal was "on" is scheduled again by
 * the same rules, in the same order, as when it arrived. Only what the votes cannot say is
 * written, each riding the ledger's group commit:
 *
 * - `["r","x",<vote key>]` just before the `p` of a vote that arrived already expired (in the
 *   same commit: that vote never gets a reminder);
 * - `["r","d",<project>,<user>,<created ms>]` once a reminder is handed to its hooks or skipped;
 * - `["r","s",<project>,<user>,<platform>,<weight>,<created ms>,<expires ms>,<road 0|1>]`: a
 *   reminder scheduled without a `p` (a snapshot, or `schedule()` called directly).
 *
 * Without `derive` (the reminder pipeline's own ledger, `<state.directory>/reminders/votes.journal`,
 * when no file vote ledger hosts the schedule), its `p` records are reminders handed over, not
 * votes: only `s` and `d` records count, and `schedule()` costs a commit of its own.
 */

/** The record of a reminder scheduled without its vote's `p`. */
export function scheduledRecord(r: ReminderRecord): JournalRecord {
  return { t: 'r', f: ['s', r.projectId, r.userId, r.platformId, r.weight, r.createdMs, r.expiresMs, r.road === 'webhook' ? 1 : 0] };
}

/** The record of a reminder that ended (handed to its hooks, or skipped as too late). */
const endedRecord = (r: ReminderRecord): JournalRecord => ({ t: 'r', f: ['d', r.projectId, r.userId, r.createdMs] });

const isString = (value: unknown): value is string => typeof value === 'string';

/** The reminder of an `s` record's fields (after `s`), or undefined when they are not one. */
function parseScheduled(f: readonly unknown[]): ReminderRecord | undefined {
  const [projectId, userId, platformId, weight, createdMs, expiresMs, road] = f;
  if (!isString(projectId) || !isString(userId) || !(platformId === null || isString(platformId))) return undefined;
  if (typeof weight !== 'number' || typeof createdMs !== 'number' || typeof expiresMs !== 'number' || (road !== 0 && road !== 1)) return undefined;
  return { projectId, userId, platformId, weight, createdMs, expiresMs, road: road === 1 ? 'webhook' : 'poll' };
}

/**
 * Replays a journal's records into `table` (pure: the agent at open and the CLI beside it read a
 * journal the same way). With `derive`, a vote recorded while the journal is "on" schedules its
 * reminder unless an `x` for its key came just before it; "off" forgets every reminder.
 */
export function createReminderReplay(table: ReminderTable, derive: boolean): (record: JournalRecord) => void {
  let on = false;
  let expiredKey: string | undefined;
  return (record) => {
    if (record.t === 'p') {
      const skip = expiredKey === record.v.key;
      expiredKey = undefined;
      const reminder = derive && on && !skip ? recordOfVote(record.v) : undefined;
      if (reminder !== undefined) table.put(reminder);
      return;
    }
    if (record.t !== 'r') return;
    const [kind, ...f] = record.f;
    if (kind === 'on') on = true;
    else if (kind === 'off') {
      on = false;
      table.clear();
    } else if (kind === 'x' && isString(f[0])) expiredKey = f[0];
    else if (kind === 'd' && isString(f[0]) && isString(f[1]) && typeof f[2] === 'number') table.remove(f[0], f[1], f[2]);
    else if (kind === 's') {
      const reminder = parseScheduled(f);
      if (reminder !== undefined) table.put(reminder);
    }
  };
}

/** A {@link ReminderStore} that is a file vote ledger's companion (give it as the ledger's `companion`). */
export type LedgerReminderStore = ReminderStore & LedgerCompanion & { committed(): void };

/** Options of {@link createLedgerReminderStore}. */
export interface LedgerReminderStoreOptions {
  /** `votes.reminders.delay`. Default 0. */
  delayMs?: number;
  /** Epoch ms: whether a vote the ledger records arrived expired. */
  now: () => number;
  /** True beside the rewards' ledger: its votes are the reminders (see above). */
  derive: boolean;
}

/**
 * Votes the ledger recorded, not yet in the table, with their expiry: put there once the ledger's
 * write is under way, so that the table's work runs while libuv's thread pool opens, writes and
 * fsyncs the journal, instead of before it. (The ledger's commit starts its write in the check
 * phase of the event loop's turn in which the votes were recorded, `createCommitter`, after the
 * immediate queued here; that immediate queues another, which runs in the next turn, the write
 * already handed to the thread pool.) Anything that reads the table puts them there first, in
 * order. `recorded` decides at once only whether a vote arrived expired: that mark must share the
 * vote's commit.
 */
function createArrivals(table: ReminderTable, now: () => number) {
  // Reused from batch to batch (no array grown from empty per batch; they keep the size of the
  // largest batch, 40 bytes a vote); a place is cleared once its vote is in the table, so that no
  // vote is held here after that. With each vote, what was read of it already: its expiry, and
  // its key's parts (`voteKeyPartsInto`), which the ledger read just before.
  const votes: (Vote | undefined)[] = [];
  const batch: { -readonly [K in keyof VoteBatch]: VoteBatch[K] } = { votes, count: 0, expires: new Float64Array(128), keyParts: new Float64Array(3 * 128) };
  /** Whether this turn's batch has begun (the clock read, its end queued). */
  let batchOpen = false;
  /** Scheduled and replaced since the last commit of the ledger: counted once durable. */
  const tally = { scheduled: 0, replaced: 0 };
  /** The vote's expiry, and the clock as the batch began (typed: no heap number per vote). */
  const expiry = new Float64Array(2);
  const flush = () => {
    if (batch.count === 0) return;
    table.insertBatch(batch, tally);
    for (let i = 0; i < batch.count; i++) votes[i] = undefined;
    batch.count = 0;
  };
  // The first immediate ends the batch (the next vote reads the clock again), the second puts it in.
  const flushLater = () => flush();
  const endBatch = () => {
    batchOpen = false;
    setImmediate(flushLater);
  };
  const grow = () => {
    const expires = new Float64Array(batch.count * 2);
    expires.set(batch.expires);
    const keyParts = new Float64Array(batch.count * 6);
    keyParts.set(batch.keyParts);
    batch.expires = expires;
    batch.keyParts = keyParts;
  };
  return {
    tally,
    flush,
    get size() {
      return batch.count;
    },
    recorded(vote: Vote): JournalRecord | undefined {
      if (!voteExpiryInto(vote, expiry, 0)) return undefined;
      // The clock is read once per batch (the votes of one synchronous recordPending share it).
      if (!batchOpen) {
        batchOpen = true;
        expiry[1] = now();
        setImmediate(endBatch);
      }
      if (expiry[0]! <= expiry[1]!) return { t: 'r', f: ['x', vote.key] };
      const at = batch.count;
      if (at === batch.expires.length) grow();
      votes[at] = vote;
      batch.expires[at] = expiry[0]!;
      if (!voteKeyPartsInto(vote, batch.keyParts, 3 * at)) batch.keyParts[3 * at] = Number.NaN;
      batch.count = at + 1;
      return undefined;
    },
  };
}

/** The reminder store riding a file vote ledger: create it, give it to the ledger as `companion`, open the ledger. */
export function createLedgerReminderStore(options: LedgerReminderStoreOptions): LedgerReminderStore {
  const table = new ReminderTable({ delayMs: options.delayMs ?? 0 });
  const arrivals = createArrivals(table, options.now);
  let commit: ((records: JournalRecord[]) => Promise<void>) | undefined;
  let where = 'a vote journal not opened yet';
  let listener: ((scheduled: number, replaced: number) => void) | undefined;
  const write = (records: JournalRecord[]) => {
    if (records.length === 0) return Promise.resolve();
    if (commit === undefined) return Promise.reject(new Error('the reminder store has no vote ledger: give it as the ledger\'s companion'));
    return commit(records);
  };
  return {
    get table() {
      arrivals.flush();
      return table;
    },
    replayed: createReminderReplay(table, options.derive),
    recorded: (vote) => (options.derive ? arrivals.recorded(vote) : undefined),
    committed() {
      arrivals.flush();
      const { tally } = arrivals;
      if (tally.scheduled + tally.replaced === 0) return;
      const { scheduled, replaced } = tally;
      tally.scheduled = 0;
      tally.replaced = 0;
      listener?.(scheduled, replaced);
    },
    snapshot() {
      arrivals.flush();
      return table.records().map(scheduledRecord);
    },
    // An `s` record is about 95 bytes with 18-digit IDs.
    snapshotBytes: () => (table.size + arrivals.size) * 95,
    attach(given, describe) {
      commit = given;
      where = describe;
    },
    watch(given) {
      listener = given;
    },
    open: () => Promise.resolve(),
    keep: (records) => write(records.map(scheduledRecord)),
    end: (records) => write(records.map(endedRecord)),
    close: () => Promise.resolve(),
    describe: () => (options.derive ? `${where}, with the votes` : where),
  };
}
