import type { JournalRecord } from './ledger-records.js';
import type { Vote } from './types.js';

/**
 * Another part of the votes capability whose state rides the file vote ledger's journal (the vote
 * reminders): its records (`["r",...]`) are appended with the ledger's own, in the same group
 * commits, so they cost no write and no fsync of their own; they are replayed to it in order at
 * open and kept by compaction (the companion's snapshot follows the ledger's). The ledger keeps no
 * state of them.
 *
 * The journal says whether a companion follows its votes: the ledger writes `["r","on"]` when it
 * opens with a companion and the journal was not already "on", and `["r","off"]` when it opens
 * without one and it was; a snapshot written with a companion starts its part with "on". So votes
 * recorded while no companion followed them are never taken for votes it saw.
 */
export interface LedgerCompanion {
  /** Each `p` (vote recorded) and `r` record of the journal at open, in order. */
  replayed(record: JournalRecord): void;
  /**
   * A vote the ledger records as pending for the first time, called synchronously before its
   * record is queued: a record returned is written just before the vote's, in the same commit.
   */
  recorded(vote: Vote): JournalRecord | undefined;
  /** Once the records of a `recordPending` call are durable (not called when its commit fails). */
  committed?(): void;
  /** The companion's records for a snapshot (compaction), written after the ledger's own and an "on" mark. */
  snapshot(): JournalRecord[];
  /** About how many bytes {@link snapshot} takes as journal lines. */
  snapshotBytes(): number;
  /**
   * Called once by the ledger it joins: how the companion appends records of its own (resolves
   * once they are durable), and the ledger's `describe()`.
   */
  attach(commit: (records: JournalRecord[]) => Promise<void>, describe: string): void;
}

/** `["r","on"]`: a companion follows the votes recorded from here on. */
export const COMPANION_ON: JournalRecord = { t: 'r', f: ['on'] };
/** `["r","off"]`: none does from here on; what the companion recorded before is void. */
export const COMPANION_OFF: JournalRecord = { t: 'r', f: ['off'] };

/** Whether `record` is an "on" or "off" mark. */
export function companionMark(record: JournalRecord): 'on' | 'off' | undefined {
  if (record.t !== 'r') return undefined;
  const mark = record.f[0];
  return mark === 'on' || mark === 'off' ? mark : undefined;
}
