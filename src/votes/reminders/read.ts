import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { RedisConnection } from '../../redis/connection.js';
import { errnoCode, fsReason, StoreError } from '../../store/errors.js';
import { carryOver } from './carry-over.js';
import { newerJournalError } from '../journal.js';
import { REMINDERS_JOURNAL, replayReminders } from './local-store.js';
import { createRedisReminderStore } from './redis-store.js';
import { createReminderSchedule, recordInfo, type DueReminder, type ReminderInfo, type ReminderRecord } from './schedule.js';

/*
 * The reminders as an operator reads them beside a running agent (`listing-agent votes
 * reminders`): no lock taken, nothing written. The file state replays
 * `<state.directory>/reminders.journal` as the agent does at open (or, before this version's
 * first start, the journals an earlier version kept the schedule in); Redis reads the shared
 * schedule and its `reminders:sent` list.
 */

/** What {@link readFileReminders} and {@link readRedisReminders} found. */
export interface RemindersReading {
  /** False when the file state has no reminder schedule yet (Redis: always true). */
  exists: boolean;
  /** How many reminders are scheduled. */
  size: number;
  /** The next due, soonest first. */
  next: ReminderInfo[];
  /** The last handed to the hooks, newest first. */
  lastSent: ReminderInfo[];
}

async function readText(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return undefined;
    throw new StoreError(`cannot read ${path}: ${fsReason(error)}`, path, { cause: error });
  }
}

/**
 * The reminders of the file state in `directory` (`state.directory`), read without the lock.
 * `delayMs` is `votes.reminders.delay`; `limit` how many of the next due (default 10).
 */
export async function readFileReminders(directory: string, delayMs: number, limit = 10): Promise<RemindersReading & { path: string }> {
  const path = join(directory, REMINDERS_JOURNAL);
  const schedule = createReminderSchedule(delayMs);
  const text = await readText(path);
  let sent: ReminderRecord[];
  let exists = true;
  if (text === undefined) {
    ({ sent, found: exists } = await carryOver({ readFile }, directory, schedule));
  } else {
    const read = replayReminders(text, schedule);
    if (read.replay.header.kind === 'newer') throw newerJournalError(path, 'reminders journal', read.replay.header.version);
    sent = read.sent;
  }
  const next = schedule.list(limit).map(({ record, due }) => recordInfo(record, due));
  const lastSent = sent.slice(0, limit).map((record) => recordInfo(record, schedule.dueOf(record)));
  return { path, exists, size: schedule.size, next, lastSent };
}

/** The reminders shared in Redis (`state.redis`), read only: nothing is scheduled, fired or removed. */
export async function readRedisReminders(connection: RedisConnection, delayMs: number, limit = 10): Promise<RemindersReading> {
  const store = createRedisReminderStore({ connection, delayMs });
  const info = (reminders: DueReminder[]) => reminders.map(({ record, due }) => recordInfo(record, due));
  const [size, next, lastSent] = await Promise.all([store.size(), store.list(limit), store.lastSent()]);
  return { exists: true, size, next: info(next), lastSent: info(lastSent) };
}
