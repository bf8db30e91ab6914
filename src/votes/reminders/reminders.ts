import type { AgentLogger } from '../../log/agent-logger.js';
import { stepDelay } from '../../runtime/scheduler.js';
import type { Schedule } from '../pipeline-parts.js';
import type { Vote } from '../types.js';
import { createLateLog } from './late-log.js';
import { createReminderSchedule, parseReminderLine, reminderInfo, reminderVote, type ReminderInfo, type ReminderSchedule } from './schedule.js';

/*
 * The reminder timer over the pure schedule: one timer, armed for the next due reminder only (in
 * steps of at most `maxStepMs`, re-checked against the clock at each step), the schedule kept
 * durable in a journal, and each due reminder handed to `send` (the reminder pipeline, which
 * records it durably and runs its hooks with retries and dead letters) before it leaves the
 * journal. A crash between the two hands the reminder over again at the next start, and the
 * pipeline drops it as a duplicate of its key (`reminder:<vote key>`).
 */

/** Where the schedule is kept: lines added and removed, replayed at open. */
export interface ReminderJournal {
  /** Loads the journal; resolves with the lines scheduled when it was last written. */
  open(): Promise<string[]>;
  /** Records, durably, lines added to and removed from the schedule. */
  record(added: readonly string[], removed: readonly string[]): Promise<void>;
  /** Rewrites the journal as `lines` alone (called when removed lines outnumber the live ones). */
  compact(lines: readonly string[]): Promise<void>;
  close(): Promise<void>;
  describe(): string;
}

/** Options of {@link createReminders}. */
export interface RemindersOptions {
  journal: ReminderJournal;
  /** Hands due reminders over (the reminder pipeline's `ingest`); resolves once they are durable there. */
  send: (votes: readonly Vote[]) => Promise<unknown>;
  /** `votes.reminders.delay`. Default 0. */
  delayMs?: number;
  /** `votes.reminders.maxLateness`: a reminder due longer ago is skipped. Default 3 600 000 (1 h). */
  maxLatenessMs?: number;
  logger: AgentLogger;
  /** Epoch ms. */
  now: () => number;
  /** The timer. Default: the pipeline's (unref'd `setTimeout`). */
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
  /** Opens the journal, skips (and logs once, with the count: see `late-log.ts`) reminders due too long ago, arms the timer. */
  start(): Promise<void>;
  /** Schedules the reminders of new votes, durably; a newer vote of a user supersedes the older one's. */
  schedule(votes: readonly Vote[]): Promise<void>;
  /** Fires what is due now (the timer calls it; also after leadership is gained). */
  fire(): Promise<void>;
  /** Stops the timer and closes the journal. */
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

/** Creates the reminders over a journal and a sender; nothing runs before `start()`. */
export function createReminders(options: RemindersOptions): Reminders {
  const { journal, logger, now } = options;
  const maxLatenessMs = options.maxLatenessMs ?? DEFAULT_MAX_LATENESS_MS;
  const timer = options.schedule ?? realTimer;
  const r = {
    schedule: createReminderSchedule({ delayMs: options.delayMs ?? 0 }),
    running: false,
    cancel: undefined as (() => void) | undefined,
    removedSinceCompaction: 0,
    firing: Promise.resolve(),
    sent: [] as ReminderInfo[],
    late: createLateLog({ logger, now, maxLatenessMs }),
  };
  const info = (line: string): ReminderInfo | undefined => reminderInfo(line, r.schedule.dueOf(line));

  /** Arms the one timer: for the next due reminder, or (standing by) the next look `maxStepMs` (60 s) on. */
  const arm = (standingBy = false) => {
    r.cancel?.();
    r.cancel = undefined;
    const due = r.schedule.nextDue();
    if (!r.running || (due === undefined && options.maxStepMs === undefined)) return;
    const at = standingBy ? now() + (options.maxStepMs ?? STANDBY_LOOK_MS) : (due ?? Number.POSITIVE_INFINITY);
    const delay = stepDelay(at, now(), options.maxStepMs);
    r.cancel = timer(() => void reminders.fire(), delay);
  };

  const fireNow = async () => {
    if (!r.running) return;
    if (options.mayFire?.() === false) return arm(true);
    const { send, late } = r.schedule.takeDue(now(), maxLatenessMs);
    if (late.length > 0) options.count?.('skipped', late.length);
    r.late.add(late.length);
    r.late.endLook();
    try {
      if (send.length > 0) await options.send(send.map((line) => reminderVote(parseReminderLine(line)!)));
    } catch (error) {
      // Not handed over: put them back (the journal still has them) and try again at the next step.
      for (const line of send) r.schedule.restore(line);
      logger.error({ err: error, reminders: send.length }, 'vote reminders could not be handed to their hooks; they are kept and retried');
      r.cancel?.();
      r.cancel = timer(() => void reminders.fire(), 5_000);
      return;
    }
    r.sent = [...send.flatMap((line) => info(line) ?? []).reverse(), ...r.sent].slice(0, 10);
    await removeLines(r, journal, [...send, ...late]);
    arm();
  };

  const reminders: Reminders = {
    async start() {
      const lines = await journal.open();
      for (const line of lines) r.schedule.restore(line);
      r.running = true;
      // What came due while the agent was down: sent now, or skipped (one line, with the count).
      await reminders.fire();
      logger.info({ reminders: r.schedule.size, journal: journal.describe() }, 'vote reminders scheduled');
    },
    async schedule(votes) {
      if (await addVotes(r.schedule, journal, votes, now(), options.count)) arm();
    },
    fire() {
      r.firing = r.firing.then(fireNow, fireNow);
      return r.firing;
    },
    async stop() {
      r.running = false;
      r.cancel?.();
      r.cancel = undefined;
      await r.firing.catch(() => undefined);
      r.late.flush();
      await journal.close();
    },
    next: (limit = 10) => Promise.resolve(r.schedule.list(limit).flatMap(({ line, due }) => reminderInfo(line, due) ?? [])),
    lastSent: () => Promise.resolve([...r.sent]),
    size: () => Promise.resolve(r.schedule.size),
  };
  return reminders;
}

/** Removes sent and skipped lines from the journal, compacting it once removed lines outnumber the live ones. */
async function removeLines(r: { schedule: ReminderSchedule; removedSinceCompaction: number }, journal: ReminderJournal, lines: readonly string[]): Promise<void> {
  if (lines.length === 0) return;
  await journal.record([], lines);
  r.removedSinceCompaction += lines.length;
  if (r.removedSinceCompaction > 1000 && r.removedSinceCompaction > 2 * r.schedule.size) {
    r.removedSinceCompaction = 0;
    await journal.compact(r.schedule.lines());
  }
}

/** Schedules the reminders of `votes` and records them; true when any was added. Undone when the journal refuses. */
async function addVotes(schedule: ReminderSchedule, journal: ReminderJournal, votes: readonly Vote[], at: number, count: RemindersOptions['count']): Promise<boolean> {
  const added: string[] = [];
  const replaced: string[] = [];
  for (const vote of votes) {
    const outcome = schedule.add(vote, at);
    if (outcome.result !== 'scheduled' || outcome.line === undefined) continue;
    added.push(outcome.line);
    if (outcome.replaced !== undefined) replaced.push(outcome.replaced);
  }
  if (added.length === 0) return false;
  try {
    await journal.record(added, replaced);
  } catch (error) {
    for (const line of added) schedule.remove(line);
    for (const line of replaced) schedule.restore(line);
    throw error;
  }
  count?.('scheduled', added.length);
  if (replaced.length > 0) count?.('skipped', replaced.length);
  return true;
}

export const realTimer: Schedule = (callback, delayMs) => {
  const handle = setTimeout(callback, delayMs);
  handle.unref();
  return () => clearTimeout(handle);
};

/** A journal that keeps nothing across restarts (a memory store, tests). */
export function createMemoryReminderJournal(initial: readonly string[] = []): ReminderJournal & { readonly lines: Set<string> } {
  const lines = new Set(initial);
  return {
    lines,
    open: () => Promise.resolve([...lines]),
    record(added, removed) {
      for (const line of removed) lines.delete(line);
      for (const line of added) lines.add(line);
      return Promise.resolve();
    },
    compact(kept) {
      lines.clear();
      for (const line of kept) lines.add(line);
      return Promise.resolve();
    },
    close: () => Promise.resolve(),
    describe: () => 'memory',
  };
}
