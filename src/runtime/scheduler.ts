import { createRequire } from 'node:module';
import type { Cron } from 'croner';
import { MAX_TIMER_DELAY_MS, timerDelay } from '../contract/timer-delay.js';

/**
 * A small schedule abstraction: a cron expression (croner's syntax), a fixed interval, or one
 * delayed run, with optional jitter, no overlapping runs, errors caught, and unref'd timers (an
 * embedded agent never keeps the bot's process alive), waking only when a run is due. The poster
 * takes a {@link ScheduleFactory}, so tests pass a manual one (test/helpers/manual-scheduler.ts)
 * and drive time with `tick()` instead of sleeping.
 */

/** croner, loaded at the first cron pattern (its CommonJS build, synchronously): an agent posting on an interval never loads it. */
let croner: typeof import('croner') | undefined;
/** A paused `Cron` of `pattern` (it throws on a pattern croner refuses). */
function pausedCron(pattern: string): Cron {
  croner ??= createRequire(import.meta.url)('croner') as typeof import('croner');
  return new croner.Cron(pattern, { paused: true });
}

/** Options of {@link createSchedule}: exactly one of `cron`, `intervalMs`, `delayMs`. */
export interface ScheduleOptions {
  /** Names the schedule in logs and to the tests' manual scheduler (`sample`, `post`, `ready`, `retry`). */
  name: string;
  /** A cron expression (croner syntax, 5 or 6 fields), read in the host's time zone. */
  cron?: string;
  /** Runs every `intervalMs` (at least 1), first one interval after `start()` (or `firstDelayMs`). */
  intervalMs?: number;
  /**
   * With `intervalMs`: the first run comes this long after `start()`, and the runs after it one
   * interval apart from there (the poster lines its posts up with a keep-alive due before a full
   * interval). Default `intervalMs`.
   */
  firstDelayMs?: number;
  /** Runs once, `delayMs` after `start()` (a retry). */
  delayMs?: number;
  /** A random wait from 0 up to this long before each scheduled run (not before `trigger()`). Default 0. */
  jitterMs?: number;
  /** Randomness for the jitter, [0, 1). Default `Math.random`. */
  random?: () => number;
  /**
   * The wall clock (epoch ms) that due times are read on; the timers are Node's. Default
   * `Date.now`. A jump of this clock is noticed when the pending timer fires.
   */
  now?: () => number;
  /** The work. A run never overlaps another run of the same schedule. */
  onTick: () => Promise<void> | void;
  /** Called with whatever `onTick` throws (the schedule goes on). Default: ignore. */
  onError?: (error: unknown) => void;
  /**
   * Refuse to start a scheduled run while the previous one is still going (croner's `protect`,
   * plus the same guard for `trigger()`, which croner does not protect). Default true.
   */
  protect?: boolean;
}

/** A schedule made by a {@link ScheduleFactory}. */
export interface Schedule {
  readonly name: string;
  /** Arms the timer. Calling it twice does nothing; after `stop()` it arms anew (a fresh grid, a fresh delay). */
  start(): void;
  /** Disarms the timer and cancels a jitter wait; a run in flight finishes on its own. */
  stop(): void;
  /** Runs now, without jitter; while a run is in flight, resolves when that one is done instead. */
  trigger(): Promise<void>;
  /** Epoch ms of the next scheduled run, when known. */
  nextRunAt(): number | undefined;
  /** True while a run is in flight. */
  readonly busy: boolean;
}

/** Makes schedules; the poster's seam for tests. */
export type ScheduleFactory = (options: ScheduleOptions) => Schedule;


/**
 * The delay to arm a timer with for `dueAt` (epoch ms) as of `now`: never negative, never more than
 * `maxStepMs` (default and ceiling `MAX_TIMER_DELAY_MS`). A wait longer than that is taken in steps:
 * the caller re-checks the clock when the timer fires and arms the next step.
 */
export function stepDelay(dueAt: number, now: number, maxStepMs: number = MAX_TIMER_DELAY_MS): number {
  return Math.min(maxStepMs, timerDelay(dueAt - now));
}

/**
 * The next run of an interval schedule anchored at `anchor` (epoch ms), as of `now`: the first
 * multiple of `intervalMs` after the anchor that is later than `now`. Runs are computed from the
 * anchor, not from the previous run, so late timers never add up to drift, and runs missed while
 * the process slept (or the clock jumped forward) are skipped, not run in a burst.
 */
export function nextIntervalRun(anchor: number, intervalMs: number, now: number): number {
  if (now < anchor) return anchor;
  return anchor + (Math.floor((now - anchor) / intervalMs) + 1) * intervalMs;
}

/** How far ahead {@link longestCronGapMs} looks: a week holds every weekday pattern. */
const CRON_GAP_HORIZON_MS = 7 * 24 * 60 * 60_000;
/** How many matches {@link longestCronGapMs} walks at most (a per-minute pattern stops here). */
export const CRON_GAP_MAX_MATCHES = 1_000;

/**
 * The longest gap between two consecutive matches of a cron `pattern` from `from` (epoch ms) on,
 * over {@link CRON_GAP_HORIZON_MS} or {@link CRON_GAP_MAX_MATCHES} matches, whichever ends first
 * (a per-minute pattern: under 30 ms, once at start). A pattern matching more often than every
 * 10 minutes that also pauses for days reads as its frequent gap. A gap that ends past the
 * horizon still counts, so a monthly pattern gives its month. Undefined when it matches fewer
 * than twice.
 */
export function longestCronGapMs(pattern: string, from: number): number | undefined {
  const cron = pausedCron(pattern);
  const end = from + CRON_GAP_HORIZON_MS;
  const first = cron.nextRun(new Date(from))?.getTime();
  if (first === undefined) return undefined;
  let previous: number = first;
  let longest = 0;
  // The first gap counts even when it ends past the horizon (a monthly pattern).
  for (let matches = 1; matches < CRON_GAP_MAX_MATCHES && (matches === 1 || previous <= end); matches += 1) {
    const next: number | undefined = cron.nextRun(new Date(previous))?.getTime();
    if (next === undefined) break;
    longest = Math.max(longest, next - previous);
    previous = next;
  }
  return longest > 0 ? longest : undefined;
}

/** Throws when `options` do not name exactly one kind of schedule (the manual schedule of the tests checks them too). */
export function checkScheduleOptions({ name, cron, intervalMs, delayMs, firstDelayMs }: ScheduleOptions): void {
  const kinds = [cron, intervalMs, delayMs].filter((value) => value !== undefined).length;
  if (kinds !== 1) throw new TypeError(`schedule '${name}' needs exactly one of cron, intervalMs, delayMs`);
  if (firstDelayMs !== undefined && intervalMs === undefined) throw new TypeError(`schedule '${name}': firstDelayMs goes with intervalMs`);
}

/**
 * The run guard shared by the real schedule and the tests' manual one: one run at a time, errors
 * reported to `onError` and never thrown.
 */
export function createScheduleRunner(options: ScheduleOptions) {
  let inFlight: Promise<void> | undefined;
  const protect = options.protect ?? true;
  return {
    get busy() {
      return inFlight !== undefined;
    },
    /** Runs `before` (the jitter wait) then `onTick`, unless a run is going and protection is on. */
    run(before?: () => Promise<boolean>, joinInFlight = false): Promise<void> {
      if (inFlight && protect) return joinInFlight ? inFlight : Promise.resolve();
      const current = (async () => {
        try {
          if (before && !(await before())) return;
          await options.onTick();
        } catch (error) {
          options.onError?.(error);
        }
      })().finally(() => {
        if (inFlight === current) inFlight = undefined;
      });
      inFlight = current;
      return current;
    },
  };
}

/** What a real schedule holds between its timers. */
interface TimedSchedule {
  readonly options: ScheduleOptions;
  readonly runner: ReturnType<typeof createScheduleRunner>;
  readonly random: () => number;
  readonly now: () => number;
  /** The cron pattern, for `cron` schedules. */
  readonly pattern: Cron | undefined;
  /** The interval (at least 1 ms), for `intervalMs` schedules. */
  readonly every: number | undefined;
  timer: NodeJS.Timeout | undefined;
  jitterTimer: { timeout: NodeJS.Timeout; resolve: (go: boolean) => void } | undefined;
  started: boolean;
  /** The epoch ms the next scheduled run is due at. */
  dueAt: number | undefined;
  /** Interval schedules: the grid the runs sit on (the first run minus one interval). */
  anchor: number;
}

/** Waits a random part of `jitterMs` before a scheduled run; resolves false when `stop()` cancelled it. */
function jitter(schedule: TimedSchedule): Promise<boolean> {
  const waitMs = Math.floor(schedule.random() * (schedule.options.jitterMs ?? 0));
  if (waitMs <= 0) return Promise.resolve(true);
  return new Promise<boolean>((resolve) => {
    const timeout = setTimeout(() => {
      schedule.jitterTimer = undefined;
      resolve(true);
    }, waitMs);
    timeout.unref();
    schedule.jitterTimer = { timeout, resolve };
  });
}

function nextCronRun(schedule: TimedSchedule, from: number): number | undefined {
  return schedule.pattern!.nextRun(new Date(from))?.getTime();
}

/** Arms the one timer for `dueAt` (in pieces of at most `MAX_TIMER_DELAY_MS`, each re-checked against the clock). */
function arm(schedule: TimedSchedule): void {
  clearTimeout(schedule.timer);
  schedule.timer = undefined;
  if (!schedule.started || schedule.dueAt === undefined) return;
  schedule.timer = setTimeout(() => fire(schedule), timerDelay(schedule.dueAt - schedule.now()));
  schedule.timer.unref();
}

function fire(schedule: TimedSchedule): void {
  schedule.timer = undefined;
  if (!schedule.started || schedule.dueAt === undefined) return;
  const { every, pattern } = schedule;
  const at = schedule.now();
  if (at < schedule.dueAt) {
    if (every !== undefined && schedule.dueAt - at > every) {
      // The clock went back by more than an interval while the timer (which does not follow
      // the wall clock) waited its interval out: run now and put the grid here, rather than
      // wait out the jump.
      schedule.anchor = at;
    } else {
      // Early: a piece of a long wait, or the clock went back a little. A cron match is
      // computed again from the new time.
      if (pattern !== undefined) schedule.dueAt = nextCronRun(schedule, at);
      arm(schedule);
      return;
    }
  }
  if (schedule.options.delayMs !== undefined) {
    schedule.dueAt = undefined;
    schedule.started = false;
  } else if (every !== undefined) {
    schedule.dueAt = nextIntervalRun(schedule.anchor, every, at);
  } else {
    schedule.dueAt = nextCronRun(schedule, at);
  }
  // Armed before the run: the next run is due whatever this one takes (protect refuses an overlap).
  arm(schedule);
  void schedule.runner.run(() => jitter(schedule));
}

function startTimed(schedule: TimedSchedule): void {
  if (schedule.started) return;
  const { options, every } = schedule;
  schedule.started = true;
  const at = schedule.now();
  if (options.delayMs !== undefined) schedule.dueAt = at + Math.max(0, options.delayMs);
  else if (schedule.pattern !== undefined) schedule.dueAt = nextCronRun(schedule, at);
  else {
    const first = Math.max(0, options.firstDelayMs ?? every!);
    schedule.anchor = at + first - every!;
    schedule.dueAt = at + first;
  }
  arm(schedule);
}

function stopTimed(schedule: TimedSchedule): void {
  schedule.started = false;
  schedule.dueAt = undefined;
  clearTimeout(schedule.timer);
  schedule.timer = undefined;
  if (schedule.jitterTimer) {
    clearTimeout(schedule.jitterTimer.timeout);
    schedule.jitterTimer.resolve(false);
    schedule.jitterTimer = undefined;
  }
}

/**
 * A real schedule on one unref'd `setTimeout` at a time, armed for the next run itself: an idle
 * agent wakes only when something is due. Croner is used for cron expressions only, to compute
 * the next match (`Cron.nextRun`); its own scheduler is not, since it wakes at least every 30 s
 * per job whatever the pattern.
 *
 * - `intervalMs`: runs at `start + n × intervalMs` (n ≥ 1, or from `firstDelayMs` on), each
 *   computed from the anchor so that late timers do not drift. A clock that jumps forward skips
 *   the runs it jumped over (one run, then back on the grid); one that jumps back by more than an
 *   interval gets a run when the pending timer fires, and the grid moves there, instead of
 *   waiting out the jump.
 * - `cron`: runs at each match of the pattern; after a jump the next match is computed again.
 * - `delayMs`: runs once.
 */
export function createSchedule(options: ScheduleOptions): Schedule {
  checkScheduleOptions(options);
  const schedule: TimedSchedule = {
    options,
    runner: createScheduleRunner(options),
    random: options.random ?? Math.random,
    now: options.now ?? Date.now,
    pattern: options.cron !== undefined ? pausedCron(options.cron) : undefined,
    // A zero interval would spin; 1 ms is the least a timer can wait anyway.
    every: options.intervalMs === undefined ? undefined : Math.max(1, options.intervalMs),
    timer: undefined,
    jitterTimer: undefined,
    started: false,
    dueAt: undefined,
    anchor: 0,
  };
  return {
    name: options.name,
    get busy() {
      return schedule.runner.busy;
    },
    start: () => startTimed(schedule),
    stop: () => stopTimed(schedule),
    trigger: () => schedule.runner.run(undefined, true),
    nextRunAt: () => schedule.dueAt,
  };
}
