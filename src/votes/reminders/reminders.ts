import type { AgentLogger } from '../../log/agent-logger.js';
import { stepDelay } from '../../runtime/scheduler.js';
import { unrefDelay, type Delay } from '../../contract/timer-delay.js';
import type { Vote } from '../types.js';
import { recordInfo, recordOfVote, reminderVote, type DueReminder, type ReminderInfo, type ReminderRecord } from './schedule.js';

/*
 * The one timer of the vote reminders, over a store of the schedule: this agent's own
 * (`local-store.ts`: a Map, kept in `<state.directory>/reminders.journal` on the file state) or
 * the one every agent shares in Redis (`redis-store.ts`). The timer is armed for the soonest due
 * reminder only, in steps of at most `maxStepMs` that each re-read the clock. Each due reminder is
 * handed to `send` (the reminder pipeline, which records it durably and runs its hooks with
 * retries and dead letters) before its end is recorded in the store: a crash between the two hands
 * it over again, and the pipeline drops it as a duplicate of its key (`reminder:<vote key>`).
 */

/** Where the schedule is kept: one reminder per voter and project, and the last ones sent. */
export interface ReminderStore {
  /** Loads what is scheduled; a second call does nothing. */
  open(): Promise<void>;
  /**
   * Schedules reminders, durably: each replaces the reminder of an older vote of its voter, and
   * one no newer than the voter's is dropped. Resolves once every change so far is durable (also
   * when none of these is new: it may be on its way to the disk still), with how many were
   * scheduled, how many of those replaced one, and when the soonest of them is due.
   */
  schedule(records: readonly ReminderRecord[]): Promise<{ scheduled: number; replaced: number; soonest: number | undefined }>;
  /** The reminders due at `now`, soonest first, at most `limit` (a local store gives them all); they stay until `end()`. */
  due(now: number, limit: number): Promise<DueReminder[]>;
  /** Records durably that reminders ended, `sent` (handed to the hooks) or `skipped` (too late); one replaced since stays. */
  end(sent: readonly ReminderRecord[], skipped: readonly ReminderRecord[]): Promise<void>;
  /** When the soonest reminder is due (epoch ms), or undefined when none is scheduled. */
  nextDue(): Promise<number | undefined>;
  /** The first `limit` by due time, soonest first. */
  list(limit: number): Promise<DueReminder[]>;
  size(): Promise<number>;
  /** The last reminders sent (at most 10), newest first, with when each was due. */
  lastSent(): Promise<DueReminder[]>;
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
  schedule?: Delay;
  /**
   * The longest timer step; default and ceiling 2^31 - 1 ms. Also how often a standby looks
   * whether it leads, and how often a shared store is looked at for what other agents scheduled.
   */
  maxStepMs?: number;
  /** False while this agent must not fire (another agent leads). Read at each step. Default: always fires. */
  mayFire?: () => boolean;
  /** Counts `scheduled` and `skipped`. */
  count?: (result: 'scheduled' | 'skipped', n: number) => void;
}

/** The reminders of one agent. */
export interface Reminders {
  /** Opens the store, fires (or skips, logged once with the count: see `createLateLog`) what came due while down, arms the timer. */
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
/** How often a standby looks whether it leads now, without `maxStepMs` (it is also told, by `fire()`). */
const STANDBY_LOOK_MS = 60_000;
/** How soon a look that failed (the sender refused, the store did not answer) is tried again, at most. */
const RETRY_MS = 5_000;
/** Reminders handed over in one go, at most (a shared store is read in pages of this). */
const BATCH = 500;

const info = ({ record, due }: DueReminder) => recordInfo(record, due);

/** The state of one agent's reminders. */
interface RemindersState {
  readonly o: RemindersOptions;
  readonly maxLatenessMs: number;
  readonly late: LateLog;
  running: boolean;
  cancel: (() => void) | undefined;
  /** When (clock ms) the armed timer fires: infinity when none is armed. */
  armedAt: number;
  firing: Promise<void>;
  /** The last look failed (said once, until one succeeds). */
  failing: boolean;
}

/** Creates the reminders over a store and a sender; nothing runs before `start()`. */
export function createReminders(o: RemindersOptions): Reminders {
  const maxLatenessMs = o.maxLatenessMs ?? DEFAULT_MAX_LATENESS_MS;
  const r: RemindersState = {
    o,
    maxLatenessMs,
    late: createLateLog({ logger: o.logger, now: o.now, maxLatenessMs }),
    running: false,
    cancel: undefined,
    armedAt: Number.POSITIVE_INFINITY,
    firing: Promise.resolve(),
    failing: false,
  };
  const fire = () => {
    const step = () => look(r, fire);
    r.firing = r.firing.then(step, step);
    return r.firing;
  };
  return {
    async start() {
      await o.store.open();
      r.running = true;
      // What came due while the agent was down: sent now, or skipped (one line, with the count).
      await fire();
      o.logger.info({ reminders: await o.store.size().catch(() => null), schedule: o.store.describe() }, 'vote reminders scheduled');
    },
    async schedule(votes) {
      const now = o.now();
      const records = votes.flatMap((vote) => recordOfVote(vote) ?? []).filter((record) => record.expiresMs > now);
      const { scheduled, replaced, soonest } = await o.store.schedule(records);
      if (scheduled > 0) o.count?.('scheduled', scheduled);
      if (replaced > 0) o.count?.('skipped', replaced);
      // Re-armed when the timer would fire too late: for an earlier reminder, or a clock moved past
      // the timer's time (an injected one jumps): what it passed fires at once.
      if (soonest !== undefined && soonest < r.armedAt) arm(r, fire, soonest);
      else if (scheduled > 0 && now >= r.armedAt) arm(r, fire, await o.store.nextDue());
    },
    fire,
    async stop() {
      r.running = false;
      r.cancel?.();
      r.cancel = undefined;
      await r.firing.catch(() => undefined);
      r.late.flush();
      await o.store.close();
    },
    next: async (limit = 10) => (await o.store.list(limit)).map(info),
    lastSent: async () => (await o.store.lastSent()).map(info),
    size: () => o.store.size(),
  };
}

/** Arms the one timer, for `at` (or, without, the next step), in steps of at most `maxStepMs`. */
function arm(r: RemindersState, fire: () => Promise<void>, at: number | undefined): void {
  const { o } = r;
  r.cancel?.();
  r.cancel = undefined;
  r.armedAt = Number.POSITIVE_INFINITY;
  if (!r.running || (at === undefined && o.maxStepMs === undefined)) return;
  const now = o.now();
  const delay = stepDelay(at ?? Number.POSITIVE_INFINITY, now, o.maxStepMs);
  r.armedAt = now + delay;
  r.cancel = (o.schedule ?? unrefDelay)(() => void fire(), delay);
}

/** One look: hands over what is due (in batches), skips what is too late, arms the next look. */
async function look(r: RemindersState, fire: () => Promise<void>): Promise<void> {
  const { o } = r;
  if (!r.running) return;
  if (o.mayFire?.() === false) return arm(r, fire, o.now() + (o.maxStepMs ?? STANDBY_LOOK_MS));
  try {
    for (let more = true; more && r.running && o.mayFire?.() !== false; ) more = await fireBatch(r);
    if (r.failing) o.logger.info({}, 'vote reminders: firing resumes');
    r.failing = false;
    r.late.endLook();
    arm(r, fire, await o.store.nextDue());
  } catch (error) {
    const retryInMs = Math.min(RETRY_MS, o.maxStepMs ?? RETRY_MS);
    if (!r.failing) o.logger.warn({ err: error, retryInMs }, 'vote reminders could not be fired; they stay scheduled and are tried again');
    r.failing = true;
    r.late.endLook();
    arm(r, fire, o.now() + retryInMs);
  }
}

/** Hands over one batch of what is due; true when there may be more. */
async function fireBatch(r: RemindersState): Promise<boolean> {
  const { o, maxLatenessMs } = r;
  const now = o.now();
  const due = await o.store.due(now, BATCH);
  const send = due.filter((each) => now - each.due <= maxLatenessMs).map((each) => each.record);
  const skipped = due.filter((each) => now - each.due > maxLatenessMs).map((each) => each.record);
  if (skipped.length > 0) o.count?.('skipped', skipped.length);
  r.late.add(skipped.length);
  // The look's last batch: its line (every batch's count) is written before the hand-over, not after it.
  if (due.length < BATCH) r.late.endLook();
  // Durable in the reminder pipeline (or known there) before they leave the schedule.
  if (send.length > 0) {
    await o.send(send.map(reminderVote)).catch(async (error: unknown) => {
      if (skipped.length > 0) await o.store.end([], skipped);
      throw error;
    });
  }
  if (send.length + skipped.length > 0) await o.store.end(send, skipped);
  return due.length >= BATCH;
}

/*
 * The log of skipped reminders. The one rule, for the file schedule and the Redis one alike, for logging the reminders skipped
 * because they were due longer than `votes.reminders.maxLateness` ago. Each is counted in the
 * metric (`skipped`); the log has one warn line per start with the count: the first look at the
 * schedule that skips any writes one line with all that look skipped (every batch of it, so a
 * start's catch-up of 100 000 reminders is one line). Later skips in the same run (an outage of
 * Redis, or of every agent, longer than maxLateness; a paused process) are summed, and written as
 * one line per interval (10 min) by the first look after it ends, or at stop: never a line per look.
 */

/** The shortest time between two lines of skipped reminders. */
const SUMMARY_INTERVAL_MS = 600_000;

/** Options of {@link createLateLog}. */
interface LateLogOptions {
  logger: AgentLogger;
  /** Epoch ms (the schedule's clock). */
  now: () => number;
  /** `votes.reminders.maxLateness`, for the line. */
  maxLatenessMs: number;
}

/** The log of reminders skipped as late (see above). */
interface LateLog {
  /** Counts `n` reminders skipped by the look under way. */
  add(n: number): void;
  /** Ends a look: writes the run's first line, or the summary once the interval since the last line is over. */
  endLook(): void;
  /** Writes what was counted and not written yet (at stop). */
  flush(): void;
}

/** Creates the log of one schedule's skipped reminders, for one run. */
function createLateLog(options: LateLogOptions): LateLog {
  const { logger, now, maxLatenessMs } = options;
  let pending = 0;
  let lastLineAt: number | undefined;
  const write = () => {
    if (lastLineAt === undefined) {
      logger.warn(
        { skipped: pending, maxLateness: maxLatenessMs },
        'vote reminders due longer than votes.reminders.maxLateness ago were skipped (they came due while no agent could send them); ' +
          'raise votes.reminders.maxLateness to send such reminders late. More skipped in this run are summed in one line per 10 min',
      );
    } else {
      const fields = { skipped: pending, maxLateness: maxLatenessMs, sinceMs: now() - lastLineAt };
      logger.warn(fields, 'more vote reminders due longer than votes.reminders.maxLateness ago were skipped since the last line');
    }
    lastLineAt = now();
    pending = 0;
  };
  return {
    add(n) {
      pending += n;
    },
    endLook() {
      if (pending > 0 && (lastLineAt === undefined || now() - lastLineAt >= SUMMARY_INTERVAL_MS)) write();
    },
    flush() {
      if (pending > 0) write();
    },
  };
}
