import type { AgentLogger } from '../../log/agent-logger.js';
import { stepDelay } from '../../runtime/scheduler.js';
import type { Schedule } from '../pipeline.js';
import type { Vote } from '../types.js';
import { createLateLog, type LateLog } from './late-log.js';
import { createReminderSchedule, recordInfo, recordOfVote, reminderVote } from './schedule.js';
import type { ReminderInfo, ReminderRecord, ReminderSchedule } from './schedule.js';

/*
 * The reminder timer over the schedule (`schedule.ts`): one timer, armed for the soonest due
 * reminder only (in steps of at most `maxStepMs`, re-checked against the clock at each step), the
 * schedule kept durable by a store (`file-store.ts`: `<state.directory>/reminders.journal`), and
 * each due reminder handed to `send` (the reminder pipeline, which records it durably and runs its
 * hooks with retries and dead letters) before its end is recorded in the store. A crash between the
 * two hands the reminder over again at the next start, and the pipeline drops it as a duplicate of
 * its key (`reminder:<vote key>`).
 */

/** Where the schedule is kept, and the last reminders sent. */
export interface ReminderStore {
  /** The schedule, filled by `open()`. */
  readonly schedule: ReminderSchedule;
  /** Loads what is scheduled and the last sent; a second call does nothing. */
  open(): Promise<void>;
  /**
   * Records, durably, reminders just put in the schedule; resolves once every change made so far
   * is durable (also with none: a vote scheduled already may still be on its way to the disk).
   */
  keep(records: readonly ReminderRecord[]): Promise<void>;
  /** Records, durably, that reminders ended: `sent` handed to the hooks, `skipped` too late. */
  end(sent: readonly ReminderRecord[], skipped: readonly ReminderRecord[]): Promise<void>;
  /** The last reminders sent (at most 10), newest first, kept across restarts where the store is. */
  lastSent(): readonly ReminderRecord[];
  close(): Promise<void>;
  describe(): string;
}

/** Options of {@link createReminders}. */
export interface RemindersOptions {
  store: ReminderStore;
  /** Hands due reminders over (the reminder pipeline's `ingest`); resolves once they are durable there. */
  send: (votes: readonly Vote[]) => Promise<unknown>;
  /** `votes.reminders.maxLateness`: a reminder due longer ago is skipped. Default 3 600 000 (1 h). */
  maxLatenessMs?: number;
  logger: AgentLogger;
  /** Epoch ms. */
  now: () => number;
  /** The timer. Default: an unref'd `setTimeout`. */
  schedule?: Schedule;
  /** The longest timer step; default and ceiling 2^31 - 1 ms. With several agents, how often the leader reloads. */
  maxStepMs?: number;
  /** False while this agent must not fire (another agent leads). Read at each step. Default: always fires. */
  mayFire?: () => boolean;
  /** Counts `scheduled` and `skipped`. */
  count?: (result: 'scheduled' | 'skipped', n: number) => void;
}

/** The reminders of one agent. */
export interface Reminders {
  /** Opens the store, skips (and logs once, with the count: see `late-log.ts`) reminders due too long ago, arms the timer. */
  start(): Promise<void>;
  /** Schedules the reminders of new votes, durably; a newer vote of a user supersedes the older one's. */
  schedule(votes: readonly Vote[]): Promise<void>;
  /** Fires what is due now (the timer calls it; also after leadership is gained). */
  fire(): Promise<void>;
  /** Stops the timer and closes the store. */
  stop(): Promise<void>;
  /** The next reminders due, soonest first (default 10). */
  next(limit?: number): Promise<ReminderInfo[]>;
  /** The last reminders handed to the hooks, newest first (at most 10). */
  lastSent(): Promise<ReminderInfo[]>;
  /** How many are scheduled. */
  size(): Promise<number>;
}

const DEFAULT_MAX_LATENESS_MS = 3_600_000;
/** How often a standby looks whether it leads now (it is also told, by `fire()`, when it does). */
const STANDBY_LOOK_MS = 60_000;
/** How soon reminders the sender refused are handed over again. */
const RETRY_MS = 5_000;

interface RemindersState {
  readonly o: RemindersOptions;
  readonly schedule: ReminderSchedule;
  running: boolean;
  cancel: (() => void) | undefined;
  /** When (clock ms) the armed timer fires: infinity when none is armed. */
  armedAt: number;
  firing: Promise<void>;
  /** The skipped-as-late log of this run. */
  readonly late: LateLog;
}

/** Creates the reminders over a store and a sender; nothing runs before `start()`. */
export function createReminders(options: RemindersOptions): Reminders {
  const r: RemindersState = {
    o: options,
    schedule: options.store.schedule,
    running: false,
    cancel: undefined,
    armedAt: Number.POSITIVE_INFINITY,
    firing: Promise.resolve(),
    late: createLateLog({ logger: options.logger, now: options.now, maxLatenessMs: options.maxLatenessMs ?? DEFAULT_MAX_LATENESS_MS }),
  };
  const fire = () => {
    const step = () => fireNow(r, reminders);
    r.firing = r.firing.then(step, step);
    return r.firing;
  };
  const reminders: Reminders = {
    async start() {
      await options.store.open();
      r.running = true;
      // What came due while the agent was down: sent now, or skipped (one line, with the count).
      await fire();
      options.logger.info({ reminders: r.schedule.size, journal: options.store.describe() }, 'vote reminders scheduled');
    },
    schedule: (votes) => scheduleVotes(r, votes, reminders),
    fire,
    async stop() {
      r.running = false;
      r.cancel?.();
      r.cancel = undefined;
      await r.firing.catch(() => undefined);
      r.late.flush();
      await options.store.close();
    },
    next: (limit = 10) => Promise.resolve(r.schedule.list(limit).map(({ record, due }) => recordInfo(record, due))),
    lastSent: () => Promise.resolve(options.store.lastSent().map((record) => recordInfo(record, r.schedule.dueOf(record)))),
    size: () => Promise.resolve(r.schedule.size),
  };
  return reminders;
}

/** Schedules the reminders of `votes` (none for a vote expired by now) and records them durably. */
async function scheduleVotes(r: RemindersState, votes: readonly Vote[], reminders: Reminders): Promise<void> {
  const kept: ReminderRecord[] = [];
  let replaced = 0;
  const now = r.o.now();
  for (const vote of votes) {
    const record = recordOfVote(vote);
    if (record === undefined || record.expiresMs <= now) continue;
    const result = r.schedule.put(record);
    if (result === 'known') continue;
    if (result === 'replaced') replaced += 1;
    kept.push(record);
  }
  await r.o.store.keep(kept);
  if (kept.length === 0) return;
  r.o.count?.('scheduled', kept.length);
  if (replaced > 0) r.o.count?.('skipped', replaced);
  // Re-armed when the timer would fire too late: for an earlier reminder, or a clock moved past
  // the timer's time (an injected one jumps): what it passed fires at once.
  if ((r.schedule.nextDue() ?? Number.POSITIVE_INFINITY) < r.armedAt || now >= r.armedAt) arm(r, reminders);
}

/** Arms the one timer: for the next due reminder, or (standing by) the next look `maxStepMs` (60 s) on. */
function arm(r: RemindersState, reminders: Reminders, standingBy = false): void {
  const { o } = r;
  r.cancel?.();
  r.cancel = undefined;
  r.armedAt = Number.POSITIVE_INFINITY;
  const due = r.schedule.nextDue();
  if (!r.running || (due === undefined && o.maxStepMs === undefined)) return;
  const now = o.now();
  const at = standingBy ? now + (o.maxStepMs ?? STANDBY_LOOK_MS) : (due ?? Number.POSITIVE_INFINITY);
  const delay = stepDelay(at, now, o.maxStepMs);
  r.armedAt = now + delay;
  r.cancel = (o.schedule ?? realTimer)(() => void reminders.fire(), delay);
}

async function fireNow(r: RemindersState, reminders: Reminders): Promise<void> {
  const { o } = r;
  if (!r.running) return;
  if (o.mayFire?.() === false) return arm(r, reminders, true);
  const { send, late } = r.schedule.takeDue(o.now(), o.maxLatenessMs ?? DEFAULT_MAX_LATENESS_MS);
  if (late.length > 0) o.count?.('skipped', late.length);
  r.late.add(late.length);
  r.late.endLook();
  try {
    if (send.length > 0) await o.send(send.map(reminderVote));
  } catch (error) {
    // Not handed over: put them back (the store still has them) and try again shortly.
    for (const record of send) r.schedule.put(record);
    o.logger.error({ err: error, reminders: send.length }, 'vote reminders could not be handed to their hooks; they are kept and retried');
    r.cancel?.();
    r.armedAt = o.now() + RETRY_MS;
    r.cancel = (o.schedule ?? realTimer)(() => void reminders.fire(), RETRY_MS);
    if (late.length > 0) await endInStore(r, [], late);
    return;
  }
  await endInStore(r, send, late);
  arm(r, reminders);
}

/** Records the end of sent and skipped reminders; a failure is logged (the reminder pipeline's dedupe covers a repeat). */
async function endInStore(r: RemindersState, sent: readonly ReminderRecord[], skipped: readonly ReminderRecord[]): Promise<void> {
  if (sent.length + skipped.length === 0) return;
  try {
    await r.o.store.end(sent, skipped);
  } catch (error) {
    const what =
      'vote reminders: could not record that reminders were sent or skipped; if the agent restarts before the next write ' +
      'succeeds, the sent ones are dropped as duplicates and the skipped ones counted again';
    r.o.logger.warn({ err: error, reminders: sent.length + skipped.length }, what);
  }
}

export const realTimer: Schedule = (callback, delayMs) => {
  const handle = setTimeout(callback, delayMs);
  handle.unref();
  return () => clearTimeout(handle);
};

/** The newest first, at most 10: what a store keeps of the reminders sent. */
export function withSent(lastSent: readonly ReminderRecord[], sent: readonly ReminderRecord[]): ReminderRecord[] {
  return [...[...sent].reverse(), ...lastSent].slice(0, 10);
}

/** A store that keeps nothing across restarts (a memory store, tests). */
export function createMemoryReminderStore(options: { delayMs?: number } = {}): ReminderStore {
  let sent: ReminderRecord[] = [];
  return {
    schedule: createReminderSchedule(options.delayMs ?? 0),
    open: () => Promise.resolve(),
    keep: () => Promise.resolve(),
    end(ended) {
      sent = withSent(sent, ended);
      return Promise.resolve();
    },
    lastSent: () => sent,
    close: () => Promise.resolve(),
    describe: () => 'memory',
  };
}
