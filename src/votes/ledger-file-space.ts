import { randomBytes } from 'node:crypto';
import { StoreError } from '../store/errors.js';
import { classifyWriteError, systemErrorCode } from '../store/write-health.js';
import type { JournalFs } from './journal.js';
import { parseRecord } from './ledger-records.js';

/**
 * Room for the records that finish votes, on a disk that fills up. Once a vote's hooks succeeded,
 * its completion record is all that stands between it and a second reward after a restart; so
 * the file ledger keeps a reserve file beside the journal (`votes.journal.reserve`), written when
 * the ledger opens, and gives it up (truncates it) the moment an append meets a full disk. The
 * room it frees takes the completion records of the votes already running and the last records
 * of a clean stop, while new votes are refused (a webhook delivery is answered 503 and re-sent).
 * A probe takes the reserve back once the disk has room again: only then is the directory
 * writable again.
 */

export const RESERVE_SUFFIX = '.reserve';

/**
 * The reserve's default size: 256 KiB, room for about 5,000 votes with one hook (a completion line
 * is `{"t":"c","k":"<user ID>:<ms>"}`, 51 bytes with a 20-digit user ID) or 2,000 with two (a
 * hook's record adds about 75 bytes). What a stop on a full disk needs is one record per vote
 * running at that moment, at most the pipeline's backlog.
 */
export const DEFAULT_RESERVE_BYTES = 256 * 1024;

/** The reserve file and whether it holds its room now. */
export interface Reserve {
  readonly path: string;
  readonly bytes: number;
  /** The file holds `bytes` of room now. */
  held: boolean;
}

/** Whether `error` is a full disk (or a used-up quota). */
export const isNoSpace = (error: unknown): boolean => classifyWriteError(error) === 'no_space';

/**
 * Writes the reserve to its full size and syncs it (random text: a compressing file system keeps
 * the room too). On failure the partial file is truncated again, so a failed attempt takes no
 * room, and the error is thrown.
 */
export async function takeReserve(fs: JournalFs, reserve: Reserve): Promise<void> {
  if (reserve.bytes <= 0) return;
  try {
    const handle = await fs.open(reserve.path, 'w', 0o600);
    try {
      await handle.writeFile(randomBytes(Math.ceil((reserve.bytes * 3) / 4)).toString('base64').slice(0, reserve.bytes));
      await handle.datasync();
    } finally {
      await handle.close().catch(() => undefined);
    }
    reserve.held = true;
  } catch (error) {
    reserve.held = false;
    if (systemErrorCode(error) !== 'EROFS') await fs.truncate(reserve.path, 0).catch(() => undefined);
    throw error;
  }
}

/** Proves the directory takes writes while the reserve is held: one page of it rewritten in place and synced (no new room needed). */
export async function touchReserve(fs: JournalFs, reserve: Reserve): Promise<void> {
  const handle = await fs.open(reserve.path, 'r+', 0o600);
  try {
    await handle.writeFile(randomBytes(3_072).toString('base64'));
    await handle.datasync();
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/** Gives the reserve's room back to the disk; true when it held some. */
export async function giveUpReserve(fs: JournalFs, reserve: Reserve): Promise<boolean> {
  if (!reserve.held) return false;
  reserve.held = false;
  await fs.truncate(reserve.path, 0).catch(() => undefined);
  return true;
}

/** What records that never reached the disk mean for the votes concerned (pure). */
export interface UnwrittenRecords {
  /** Votes whose hooks succeeded (or gave up) without their record on disk: their hooks run again at the next start. */
  rewardedAgain: string[];
  /**
   * New votes whose pending record is not on disk: they were answered 503 (or their cursor page
   * not stored), so the service sends them again.
   */
  notRecorded: string[];
}

/** Sorts the lines still queued by what they mean (pure); lines that are no record are ignored. */
export function unwrittenRecords(lines: readonly string[]): UnwrittenRecords {
  const again = new Set<string>();
  const pending = new Set<string>();
  for (const line of lines) {
    const record = parseRecord(line);
    if (record === undefined) continue;
    if (record.t === 'p') pending.add(record.v.key);
    else if (record.t === 'c' || record.t === 'h') again.add(record.k);
    else if (record.t === 'd') again.add(record.l.key);
  }
  // A vote that is not on disk at all is not rewarded again: it is not there to be replayed.
  for (const key of pending) again.delete(key);
  return { rewardedAgain: [...again], notRecorded: [...pending] };
}

/** At most `max` keys, then how many more. */
export function listKeys(keys: readonly string[], max = 20): string {
  const shown = keys.slice(0, max).join(', ');
  return keys.length > max ? `${shown} and ${keys.length - max} more` : shown;
}

/**
 * The vote ledger could not write its last records when it closed: the votes in `rewardedAgain`
 * will be rewarded again at the next start. Code `store`.
 */
export class LedgerCloseError extends StoreError {
  /** Keys of the votes whose hooks run again at the next start. */
  readonly rewardedAgain: readonly string[];
  /** Keys of new votes not recorded (the service re-sends them). */
  readonly notRecorded: readonly string[];

  constructor(path: string, reason: string, unwritten: UnwrittenRecords, cause: unknown) {
    const { rewardedAgain, notRecorded } = unwritten;
    const again =
      rewardedAgain.length === 0
        ? 'no vote whose hooks ran is concerned'
        : `${rewardedAgain.length} vote(s) whose hooks succeeded (or gave up) are not recorded as done, ` +
          `so their hooks run again at the next start: ${listKeys(rewardedAgain)}`;
    const refused = `${notRecorded.length} new vote(s) were never recorded and were refused, so the service sends them again`;
    const lost = notRecorded.length === 0 ? '' : `; ${refused}`;
    super(`could not write the last records of ${path} at close: ${reason}; ${again}${lost}`, path, { cause });
    this.rewardedAgain = rewardedAgain;
    this.notRecorded = notRecorded;
  }
}
