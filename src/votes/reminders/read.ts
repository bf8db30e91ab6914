import { open, readFile, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { silentLogger } from '../../log/agent-logger.js';
import type { RedisConnection } from '../../redis/connection.js';
import { errnoCode, fsReason, StoreError } from '../../store/errors.js';
import { replayJournal } from '../journal.js';
import { createFileVoteLedger } from '../ledger-file.js';
import { parseRecord, type JournalRecord } from '../ledger-records.js';
import type { Vote } from '../types.js';
import { companionMark } from '../ledger-companion.js';
import { createReminderReplay } from './journal-ledger.js';
import { createRedisReminders } from './redis-reminders.js';
import type { Reminders } from './reminders.js';
import { recordInfo, type ReminderInfo } from './schedule.js';
import { ReminderTable } from './table.js';

/*
 * The reminders as an operator reads them beside a running agent (`listing-agent votes
 * reminders`): no lock taken, nothing written. The file state replays the schedule as the agent
 * does at open: from the rewards' vote journal (`votes.journal`, where it rides with the votes)
 * and the reminder pipeline's (`reminders/votes.journal`, where it is kept when no file vote
 * ledger hosts it). The last sent are read from the end of the reminder pipeline's journal (the
 * reminders handed to the hooks, in the order they were; a running agent seeds its status page's
 * "last sent" from it at start). Redis reads the shared schedule and its `reminders:sent` list.
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
 * are the reminders, see `journal-ledger.ts`). Whether the journal holds a schedule (it ends
 * "on"), and its path.
 */
async function replayLedger(directory: string, table: ReminderTable, derive: boolean): Promise<{ path: string; on: boolean }> {
  const { path } = createFileVoteLedger({ directory });
  const text = await readText(path);
  if (text === undefined) return { path, on: false };
  const replay = createReminderReplay(table, derive);
  let on = false;
  const result = replayJournal(text, (record: JournalRecord) => {
    const mark = companionMark(record);
    if (mark !== undefined) on = mark === 'on';
    replay(record);
  });
  if (result.header.kind === 'newer') throw new StoreError(`${path} was written by a newer listing-agent (journal version ${result.header.version}); use that version to read it`, path);
  return { path, on };
}

/** The end of the ledger's journal read first: enough for the last ten reminders with several hooks each. */
const TAIL_BYTES = 64 * 1024;

/** The reminder votes of the journal lines in `text` (`p` and snapshot `e` records), in journal order. */
function sentVotes(text: string): Vote[] {
  const sent: Vote[] = [];
  for (const line of text.split('\n')) {
    const record = line.startsWith('["p"') || line.startsWith('{') ? parseRecord(line) : undefined;
    if (record?.t === 'p' || record?.t === 'e') sent.push(record.v);
  }
  return sent;
}

/**
 * The last `limit` reminders the reminder ledger recorded (handed to the hooks), newest first,
 * read from the end of its journal (`<directory>/reminders/votes.journal`): 64 KiB, and more only
 * when that holds fewer. A reminder finished before the ledger's last compaction is no longer
 * there (the snapshot keeps its key alone).
 */
export async function lastSentInLedger(directory: string, delayMs: number, limit = 10): Promise<ReminderInfo[]> {
  const { path } = createFileVoteLedger({ directory: join(directory, 'reminders') });
  let handle: FileHandle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return [];
    throw new StoreError(`cannot read ${path}: ${fsReason(error)}`, path, { cause: error });
  }
  try {
    const { size } = await handle.stat();
    for (let window = TAIL_BYTES; ; window *= 8) {
      const start = Math.max(0, size - window);
      const { buffer, bytesRead } = await handle.read(Buffer.alloc(size - start), 0, size - start, start);
      const text = buffer.toString('utf8', 0, bytesRead);
      // From the middle of the file, the first line is a piece of one.
      const sent = sentVotes(start === 0 ? text : text.slice(text.indexOf('\n') + 1));
      if (sent.length >= limit || start === 0) return sent.slice(-limit).reverse().map((vote) => sentInfo(vote, delayMs));
    }
  } catch (error) {
    throw new StoreError(`cannot read ${path}: ${fsReason(error)}`, path, { cause: error });
  } finally {
    await handle.close();
  }
}

/**
 * `reminders` whose last sent go on with `earlier` (those sent before this start, newest first,
 * from {@link lastSentInLedger}): the file schedule keeps its last sent in memory only.
 */
export function withEarlierSent(reminders: Reminders, earlier: readonly ReminderInfo[]): Reminders {
  return {
    ...reminders,
    async lastSent() {
      const live = await reminders.lastSent();
      const shown = new Set(live.map((info) => info.voteKey));
      return [...live, ...earlier.filter((info) => !shown.has(info.voteKey))].slice(0, 10);
    },
  };
}

/**
 * The reminders of the file state in `directory` (`state.directory`), read without the lock.
 * `delayMs` is `votes.reminders.delay`; `limit` how many of the next and last sent (default 10).
 */
export async function readFileReminders(directory: string, delayMs: number, limit = 10): Promise<RemindersReading & { path: string }> {
  const table = new ReminderTable({ delayMs });
  // Beside the rewards' ledger (the agent's default), or in the reminder pipeline's own: one holds it.
  const votes = await replayLedger(directory, table, true);
  const own = await replayLedger(join(directory, 'reminders'), table, false);
  const path = votes.on || !own.on ? votes.path : own.path;
  const next = table.list(limit).map(({ record, due }) => recordInfo(record, due));
  return { path, exists: votes.on || own.on, size: table.size, next, lastSent: await lastSentInLedger(directory, delayMs, limit) };
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
