import { Cron } from 'croner';

/**
 * A small schedule abstraction over croner: a cron expression, a fixed interval, or one delayed
 * run, with optional jitter, no overlapping runs, errors caught, and unref'd timers (an embedded
 * agent never keeps the bot's process alive). The poster takes a {@link ScheduleFactory}, so tests
 * pass {@link createManualScheduler} and drive time with `tick()` instead of sleeping.
 */

/** Options of {@link createSchedule}: exactly one of `cron`, `intervalMs`, `delayMs`. */
export interface ScheduleOptions {
  /** Names the schedule in logs and in {@link ManualScheduler.get} (`sample`, `post`, `ready`, `retry`). */
  name: string;
  /** A cron expression (croner syntax, 5 or 6 fields), read in the host's time zone. */
  cron?: string;
  /** Runs every `intervalMs` (rounded up to whole seconds, croner's resolution), first one interval after `start()`. */
  intervalMs?: number;
  /** Runs once, `delayMs` after `start()` (a retry). */
  delayMs?: number;
  /** A random wait from 0 up to this long before each scheduled run (not before `trigger()`). Default 0. */
  jitterMs?: number;
  /** Randomness for the jitter, [0, 1). Default `Math.random`. */
  random?: () => number;
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
  /** Arms the timer. Calling it twice does nothing. */
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

/** Croner's job options for every schedule: timers unref'd, overlapping runs refused, errors caught. */
function cronOptions(startAt?: Date) {
  return { paused: true, unref: true, protect: true, catch: true, ...(startAt ? { startAt } : {}) } as const;
}

function checkOptions(options: ScheduleOptions): void {
  const kinds = [options.cron, options.intervalMs, options.delayMs].filter((value) => value !== undefined).length;
  if (kinds !== 1) throw new TypeError(`schedule '${options.name}' needs exactly one of cron, intervalMs, delayMs`);
}

/**
 * The run guard shared by the real and the manual schedule: one run at a time, errors reported to
 * `onError` and never thrown.
 */
function createRunner(options: ScheduleOptions) {
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

/**
 * A real schedule: croner for `cron` and `intervalMs` jobs, an unref'd `setTimeout` for a
 * `delayMs` run (croner's one-off dates have whole-second resolution and refuse past dates).
 */
export function createSchedule(options: ScheduleOptions): Schedule {
  checkOptions(options);
  const runner = createRunner(options);
  const random = options.random ?? Math.random;
  let job: Cron | undefined;
  let timer: NodeJS.Timeout | undefined;
  let jitterTimer: { timeout: NodeJS.Timeout; resolve: (go: boolean) => void } | undefined;
  let started = false;

  const jitter = (): Promise<boolean> => {
    const waitMs = Math.floor(random() * (options.jitterMs ?? 0));
    if (waitMs <= 0) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      const timeout = setTimeout(() => {
        jitterTimer = undefined;
        resolve(true);
      }, waitMs);
      timeout.unref();
      jitterTimer = { timeout, resolve };
    });
  };
  const scheduledRun = () => runner.run(jitter);

  return {
    name: options.name,
    get busy() {
      return runner.busy;
    },
    start() {
      if (started) return;
      started = true;
      if (options.delayMs !== undefined) {
        timer = setTimeout(() => {
          timer = undefined;
          void scheduledRun();
        }, Math.max(0, options.delayMs));
        timer.unref();
      } else if (options.cron !== undefined) {
        job = new Cron(options.cron, cronOptions(), scheduledRun);
        job.resume();
      } else {
        const seconds = Math.max(1, Math.ceil(options.intervalMs! / 1000));
        // croner runs an interval job at once unless told where to start.
        job = new Cron('* * * * * *', { ...cronOptions(new Date(Date.now() + seconds * 1000)), interval: seconds }, scheduledRun);
        job.resume();
      }
    },
    stop() {
      started = false;
      job?.stop();
      job = undefined;
      clearTimeout(timer);
      timer = undefined;
      if (jitterTimer) {
        clearTimeout(jitterTimer.timeout);
        jitterTimer.resolve(false);
        jitterTimer = undefined;
      }
    },
    trigger: () => runner.run(undefined, true),
    nextRunAt() {
      const next = job?.nextRun();
      return next ? next.getTime() : undefined;
    },
  };
}

/** A schedule that runs only when a test says so. */
export interface ManualSchedule extends Schedule {
  readonly options: ScheduleOptions;
  /** True between `start()` and `stop()`. */
  readonly started: boolean;
  /** When a `delayMs` schedule is due (epoch ms on the scheduler's clock), when it has one. */
  readonly dueAt: number | undefined;
  /** Fires as the timer would (no jitter): does nothing unless started; resolves when the run is over. */
  tick(): Promise<void>;
}

/**
 * A manual schedule: `tick()` is the timer firing. `now` (when given) stamps `dueAt` for
 * `delayMs` schedules at `start()`.
 */
export function createManualSchedule(options: ScheduleOptions, now?: () => number): ManualSchedule {
  checkOptions(options);
  const runner = createRunner(options);
  let started = false;
  let dueAt: number | undefined;
  return {
    name: options.name,
    options,
    get started() {
      return started;
    },
    get dueAt() {
      return dueAt;
    },
    get busy() {
      return runner.busy;
    },
    start() {
      if (started) return;
      started = true;
      if (options.delayMs !== undefined && now) dueAt = now() + options.delayMs;
    },
    stop() {
      started = false;
    },
    async tick() {
      if (!started) return;
      // A one-off run fires once.
      if (options.delayMs !== undefined) started = false;
      await runner.run();
    },
    trigger: () => runner.run(undefined, true),
    nextRunAt: () => dueAt,
  };
}

/** A {@link ScheduleFactory} of manual schedules, with a way to find them. */
export interface ManualScheduler {
  readonly factory: ScheduleFactory;
  /** The newest schedule made with `name`. */
  get(name: string): ManualSchedule | undefined;
  /** Every schedule made with `name`, oldest first. */
  all(name: string): ManualSchedule[];
  /** Ticks every started `delayMs` schedule whose `dueAt` has come (needs `now`); resolves with how many ran. */
  runDue(): Promise<number>;
}

/** Creates a manual scheduler; `now` (the test's fake clock) makes `dueAt` and `runDue()` work. */
export function createManualScheduler(now?: () => number): ManualScheduler {
  const made: ManualSchedule[] = [];
  return {
    factory(options) {
      const schedule = createManualSchedule(options, now);
      made.push(schedule);
      return schedule;
    },
    get: (name) => made.filter((s) => s.name === name).at(-1),
    all: (name) => made.filter((s) => s.name === name),
    async runDue() {
      if (!now) throw new Error('runDue() needs the scheduler to be created with a clock');
      const due = made.filter((s) => s.started && s.dueAt !== undefined && s.dueAt <= now());
      for (const schedule of due) await schedule.tick();
      return due.length;
    },
  };
}
