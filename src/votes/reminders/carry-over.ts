import { join } from 'node:path';
import { errnoCode, fsReason, StoreError } from '../../store/errors.js';
import type { FileStoreFs } from '../../store/fs.js';
import { replayJournal } from '../journal.js';
import { JOURNAL, VERSION_2_ASIDE } from '../ledger-file-disk.js';
import type { JournalRecord } from '../ledger-records.js';
import { recordOfVote, type ReminderRecord, type ReminderSchedule } from './schedule.js';

/*
 * The schedule as the versions before `reminders.journal` kept it: inside version 2 vote journals,
 * read once, when the reminders' own journal does not exist yet (the first start of this version,
 * or `listing-agent votes reminders` before it).
 *
 * Beside the rewards' ledger (`<state.directory>/votes.journal`) a vote recorded while the journal
 * was "on" (`["r","on"]`) was its own reminder, unless an `["r","x",<vote key>]` came just before
 * it (it arrived expired); `["r","d",<project>,<user>,<created ms>]` ended one,
 * `["r","s",<project>,<user>,<platform>,<weight>,<created ms>,<expires ms>,<road 0|1>]` scheduled
 * one (a snapshot), and "off" voided them all. When a ledger of the bot's own held the votes, the
 * reminder pipeline's journal (`reminders/votes.journal`) held the `s` and `d` records. The last
 * reminders sent are the reminder votes that journal recorded (`p`, or `e` in a snapshot).
 *
 * Each journal is read from its `.v2` copy when the ledger, opened first, has rewritten it already.
 */

/** What the journals of the earlier version held, once replayed into a schedule. */
export interface CarriedOver {
  /** Whether any of them held a schedule (a reminder record). */
  found: boolean;
  /** The last reminders sent, newest first (at most 10). */
  sent: ReminderRecord[];
}

const isString = (value: unknown): value is string => typeof value === 'string';

/** The reminder of an `s` record's fields (after `s`), or undefined when they are not one. */
function scheduled(f: readonly unknown[]): ReminderRecord | undefined {
  const [projectId, userId, platformId, weight, createdMs, expiresMs, road] = f;
  if (!isString(projectId) || !isString(userId) || !(platformId === null || isString(platformId))) return undefined;
  if (typeof weight !== 'number' || typeof createdMs !== 'number' || typeof expiresMs !== 'number') return undefined;
  if (road !== 0 && road !== 1) return undefined;
  return { projectId, userId, platformId, weight, createdMs, expiresMs, road: road === 1 ? 'webhook' : 'poll' };
}

/** Applies the journal's reminder records to `schedule`; with `derive`, its votes too (see above). */
function replayReminders(records: readonly JournalRecord[], schedule: ReminderSchedule, derive: boolean): boolean {
  let on = false;
  let found = false;
  let expiredKey: string | undefined;
  for (const record of records) {
    if (record.t === 'p') {
      const skip = expiredKey === record.v.key;
      expiredKey = undefined;
      const reminder = derive && on && !skip ? recordOfVote(record.v) : undefined;
      if (reminder !== undefined) schedule.put(reminder);
      continue;
    }
    if (record.t !== 'r') continue;
    found = true;
    const [kind, ...f] = record.f;
    if (kind === 'on') on = true;
    else if (kind === 'off') {
      on = false;
      schedule.clear();
    } else if (kind === 'x' && isString(f[0])) expiredKey = f[0];
    else if (kind === 'd' && isString(f[0]) && isString(f[1]) && typeof f[2] === 'number') schedule.remove(f[0], f[1], f[2]);
    else if (kind === 's') {
      const reminder = scheduled(f);
      if (reminder !== undefined) schedule.put(reminder);
    }
  }
  return found;
}

/** The records of the version 2 journal of the ledger in `directory` (its `.v2` copy first); none when there is none. */
async function version2Records(fs: Pick<FileStoreFs, 'readFile'>, directory: string): Promise<JournalRecord[]> {
  for (const name of [VERSION_2_ASIDE, JOURNAL]) {
    const path = join(directory, name);
    let text: string;
    try {
      text = await fs.readFile(path, 'utf8');
    } catch (error) {
      if (errnoCode(error) === 'ENOENT') continue;
      const fix = 'fix its permissions so that the vote reminders it holds can be carried over';
      throw new StoreError(`cannot read ${path}: ${fsReason(error)} — ${fix}`, path, { cause: error });
    }
    const records: JournalRecord[] = [];
    const replay = replayJournal(text, (record) => void records.push(record));
    return replay.header.kind === 'ours' && replay.header.version === 2 ? records : [];
  }
  return [];
}

/** The reminders the journals of `stateDirectory` held as version 2, into `schedule` (see the module comment). */
export async function carryOver(
  fs: Pick<FileStoreFs, 'readFile'>,
  stateDirectory: string,
  schedule: ReminderSchedule,
): Promise<CarriedOver> {
  const rewards = await version2Records(fs, stateDirectory);
  const own = await version2Records(fs, join(stateDirectory, 'reminders'));
  const found = replayReminders(rewards, schedule, true);
  const foundOwn = replayReminders(own, schedule, false);
  const sent = own.flatMap((record) => (record.t === 'p' || record.t === 'e' ? (recordOfVote(record.v) ?? []) : []));
  return { found: found || foundOwn || sent.length > 0, sent: sent.slice(-10).reverse() };
}
