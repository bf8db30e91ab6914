import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { silentLogger } from '../../log/agent-logger.js';
import type { RedisConnection } from '../../redis/connection.js';
import { errnoCode, fsReason, StoreError } from '../../store/errors.js';
import { replayJournal } from '../journal.js';
import { createFileVoteLedger } from '../ledger-file.js';
import type { JournalRecord } from '../ledger-records.js';
import type { Vote } from '../types.js';
import { companionMark } from '../ledger-companion.js';
import { createReminderReplay } from './journal-ledger.js';
import { createRedisReminders } from './redis-reminders.js';
import { recordInfo, type ReminderInfo } from './schedule.js';
import { ReminderTable } from './table.js';

/*
 * The reminders as an operator reads them beside a running agent (`listing-agent votes
 * reminders`): no lock taken, nothing written. The file state replays the schedule as the agent
 * does at open: from the rewards' vote journal (`votes.journal`, where it rides with the votes)
 * and the reminder pipeline's (`reminders/votes.journal`, where it is kept when no file vote
 * ledger hosts it, and whose reminders handed to the hooks are the last sent, in order). Redis
 * reads the shared schedule and its `reminders:sent` list.
 */

/** What {@link readFileReminders} and {@link readRedisReminders} found. */
export interface RemindersReading {
  /** False when the file state has no reminder journal yet (Redis: always true). */
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

/** A reminder vote's info (its key `reminder:<user>:<ms>`), due at its expiry + `delayMs`. */
function sentInfo(vote: Vote, delayMs: number): ReminderInfo {
  return {
    voteKey: vote.key.replace(/^reminder:/, ''),
    userId: vote.userId,
    platformId: vote.platformId,
    projectId: vote.projectId,
    expiresAt: vote.expiresAt,
    dueAt: new Date(Date.parse(vote.expiresAt) + delayMs).toISOString(),
  };
}

/**
 * Replays the journal of the file vote ledger in `directory` into `table` (`derive`: the votes
 * are the reminders, see `journal-ledger.ts`); `sent` gets the votes it recorded. Whether the
 * journal holds a schedule (it ends "on"), and its path.
 */
async function replayLedger(directory: string, table: ReminderTable, derive: boolean, sent?: Vote[]): Promise<{ path: string; on: boolean }> {
  const { path } = createFileVoteLedger({ directory });
  const text = await readText(path);
  if (text === undefined) return { path, on: false };
  const replay = createReminderReplay(table, derive);
  let on = false;
  const result = replayJournal(text, (record: JournalRecord) => {
    if (record.t === 'p' || record.t === 'e') sent?.push(record.v);
    const mark = companionMark(record);
    if (mark !== undefined) on = mark === 'on';
    replay(record);
  });
  if (result.header.kind === 'newer') throw new StoreError(`${path} was written by a newer listing-agent (journal version ${result.header.version}); use that version to read it`, path);
  return { path, on };
}

/**
 * The reminders of the file state in `directory` (`state.directory`), read without the lock.
 * `delayMs` is `votes.reminders.delay`; `limit` how many of the next and last sent (default 10).
 */
export async function readFileReminders(directory: string, delayMs: number, limit = 10): Promise<RemindersReading & { path: string }> {
  const table = new ReminderTable({ delayMs });
  const sent: Vote[] = [];
  // Beside the rewards' ledger (the agent's default), or in the reminder pipeline's own: one holds it.
  const votes = await replayLedger(directory, table, true);
  const own = await replayLedger(join(directory, 'reminders'), table, false, sent);
  const path = votes.on || !own.on ? votes.path : own.path;
  const next = table.list(limit).map(({ record, due }) => recordInfo(record, due));
  const lastSent = sent.slice(-limit).reverse().map((vote) => sentInfo(vote, delayMs));
  return { path, exists: votes.on || own.on, size: table.size, next, lastSent };
}

/** The reminders shared in Redis (`state.redis`), read only: nothing is scheduled, fired or removed. */
export async function readRedisReminders(connection: RedisConnection, delayMs: number, limit = 10): Promise<RemindersReading> {
  const reminders = createRedisReminders({
    connection,
    delayMs,
    send: () => Promise.reject(new Error('a reader sends no reminder')),
    mayFire: () => false,
    logger: silentLogger,
    now: Date.now,
  });
  const [size, next, lastSent] = await Promise.all([reminders.size(), reminders.next(limit), reminders.lastSent()]);
  return { exists: true, size, next, lastSent };
}
