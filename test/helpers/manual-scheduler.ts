import {
  checkScheduleOptions,
  createScheduleRunner,
  type Schedule,
  type ScheduleFactory,
  type ScheduleOptions,
} from '../../src/runtime/scheduler.js';

/*
 * Schedules that run only when a test says so: a {@link ScheduleFactory} for the stats poster,
 * the votes poller and the capabilities, whose `tick()` is the timer firing. Built on the real
 * schedule's run guard, so a manual run overlaps, fails and joins as a real one does.
 */

/** A schedule that runs only when a test says so. */
export interface ManualSchedule extends Schedule {
  readonly options: ScheduleOptions;
  /** True between `start()` and `stop()`. */
  readonly started: boolean;
  /**
   * When a `delayMs` schedule (or the first run of one with `firstDelayMs`) is due, epoch ms on the
   * scheduler's clock, when it has one.
   */
  readonly dueAt: number | undefined;
  /** Fires as the timer would (no jitter): does nothing unless started; resolves when the run is over. */
  tick(): Promise<void>;
}

/**
 * A manual schedule: `tick()` is the timer firing. `now` (when given) stamps `dueAt` for
 * `delayMs` schedules at `start()`.
 */
function createManualSchedule(options: ScheduleOptions, now?: () => number): ManualSchedule {
  checkScheduleOptions(options);
  const runner = createScheduleRunner(options);
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
      if (options.firstDelayMs !== undefined && now) dueAt = now() + options.firstDelayMs;
    },
    stop() {
      // As the real one: nothing is due once stopped, and start() arms it anew.
      started = false;
      dueAt = undefined;
    },
    async tick() {
      if (!started) return;
      // A one-off run fires once; an interval with a first delay is then due one interval on.
      if (options.delayMs !== undefined) started = false;
      else if (dueAt !== undefined && options.intervalMs !== undefined) dueAt += options.intervalMs;
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
  /** Ticks every started schedule with a `dueAt` that has come (`delayMs`, `firstDelayMs`; needs `now`); resolves with how many ran. */
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
