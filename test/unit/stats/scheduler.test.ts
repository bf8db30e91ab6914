import { afterEach, describe, expect, it, vi } from 'vitest';
import { MAX_TIMER_DELAY_MS } from '../../../src/contract/timer-delay.js';
import { createSchedule, nextIntervalRun, type Schedule } from '../../../src/runtime/scheduler.js';
import { createManualScheduler } from '../../helpers/manual-scheduler.js';

const made: Schedule[] = [];
afterEach(() => {
  for (const schedule of made.splice(0)) schedule.stop();
  vi.useRealTimers();
});

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('createSchedule (croner)', () => {
  it('runs an interval schedule one interval after start, then every interval', async () => {
    vi.useFakeTimers({ now: Date.parse('2026-03-04T10:00:00Z') });
    let runs = 0;
    const schedule = createSchedule({ name: 'post', intervalMs: 60_000, onTick: () => void (runs += 1) });
    made.push(schedule);
    schedule.start();
    await vi.advanceTimersByTimeAsync(59_000);
    expect(runs).toBe(0);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(runs).toBe(1);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(runs).toBe(2);
    expect(schedule.nextRunAt()).toBeGreaterThan(Date.now());
    schedule.stop();
    await vi.advanceTimersByTimeAsync(180_000);
    expect(runs).toBe(2);
  });

  it('runs a cron schedule on its pattern', async () => {
    vi.useFakeTimers({ now: Date.parse('2026-03-04T10:00:30Z') });
    const at: number[] = [];
    const schedule = createSchedule({ name: 'post', cron: '*/15 * * * *', onTick: () => void at.push(Date.now()) });
    made.push(schedule);
    schedule.start();
    await vi.advanceTimersByTimeAsync(31 * 60_000);
    expect(at.map((ms) => new Date(ms).toISOString().slice(11, 16))).toEqual(['10:15', '10:30']);
  });

  it('never throws from a failing tick: the error goes to onError and the schedule goes on', async () => {
    vi.useFakeTimers({ now: Date.parse('2026-03-04T10:00:00Z') });
    const errors: unknown[] = [];
    const schedule = createSchedule({ name: 'sample', intervalMs: 10_000, onTick: () => Promise.reject(new Error('boom')), onError: (e) => errors.push(e) });
    made.push(schedule);
    schedule.start();
    await vi.advanceTimersByTimeAsync(31_000);
    expect(errors.map((e) => (e as Error).message)).toEqual(['boom', 'boom', 'boom']);
    await expect(schedule.trigger()).resolves.toBeUndefined();
    expect(errors).toHaveLength(4);
  });

  it('protects against overlapping runs, trigger() included, and trigger() joins the run in flight', async () => {
    vi.useFakeTimers({ now: Date.parse('2026-03-04T10:00:00Z') });
    const gate = deferred();
    let runs = 0;
    const schedule = createSchedule({
      name: 'post',
      intervalMs: 1_000,
      onTick: async () => {
        runs += 1;
        await gate.promise;
      },
    });
    made.push(schedule);
    schedule.start();
    await vi.advanceTimersByTimeAsync(1_100);
    expect(runs).toBe(1);
    expect(schedule.busy).toBe(true);
    // Neither the timer nor a trigger starts a second run while the first is going.
    await vi.advanceTimersByTimeAsync(5_000);
    const joined = schedule.trigger();
    expect(runs).toBe(1);
    gate.resolve();
    await joined;
    expect(schedule.busy).toBe(false);
    await schedule.trigger();
    expect(runs).toBe(2);
  });

  it('waits a random jitter before a scheduled run (not before trigger), cancelled by stop()', async () => {
    vi.useFakeTimers({ now: Date.parse('2026-03-04T10:00:00Z') });
    const at: number[] = [];
    const start = Date.now();
    const schedule = createSchedule({ name: 'post', intervalMs: 60_000, jitterMs: 10_000, random: () => 0.5, onTick: () => void at.push(Date.now() - start) });
    made.push(schedule);
    schedule.start();
    await vi.advanceTimersByTimeAsync(64_000);
    expect(at).toEqual([]);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(at).toHaveLength(1);
    expect(at[0]).toBeGreaterThanOrEqual(65_000);
    await schedule.trigger();
    expect(at).toHaveLength(2);
    // A jitter wait in progress when stop() comes never runs the tick.
    // The next run is due at 120 s and waits until 125 s: stop it at 121 s, inside its jitter wait.
    await vi.advanceTimersByTimeAsync(55_000);
    schedule.stop();
    await vi.advanceTimersByTimeAsync(20_000);
    expect(at).toHaveLength(2);
  });

  it('runs a delayMs schedule once, with an unref\'d timer', async () => {
    vi.useFakeTimers({ now: Date.parse('2026-03-04T10:00:00Z') });
    let runs = 0;
    const schedule = createSchedule({ name: 'retry', delayMs: 2_500, onTick: () => void (runs += 1) });
    made.push(schedule);
    schedule.start();
    await vi.advanceTimersByTimeAsync(2_400);
    expect(runs).toBe(0);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(runs).toBe(1);
  });

  it('needs exactly one of cron, intervalMs, delayMs', () => {
    expect(() => createSchedule({ name: 'x', onTick: () => undefined })).toThrow(/exactly one/);
    expect(() => createSchedule({ name: 'x', cron: '* * * * *', intervalMs: 5, onTick: () => undefined })).toThrow(/exactly one/);
  });
});

describe('createSchedule: timers only when a run is due', () => {
  it('arms one timer per run for an interval schedule, never a per-second poll', async () => {
    vi.useFakeTimers({ now: Date.parse('2026-03-04T10:00:00Z') });
    const spy = vi.spyOn(globalThis, 'setTimeout');
    let runs = 0;
    const schedule = createSchedule({ name: 'post', intervalMs: 30 * 60_000, onTick: () => void (runs += 1) });
    made.push(schedule);
    schedule.start();
    await vi.advanceTimersByTimeAsync(3 * 30 * 60_000);
    expect(runs).toBe(3);
    // One timer at start, one re-armed at each run: 4, where a per-second poll would be 5 400.
    expect(spy.mock.calls.length).toBeLessThanOrEqual(4);
    spy.mockRestore();
  });

  it('arms one timer per match for a cron schedule (croner itself wakes every 30 s)', async () => {
    vi.useFakeTimers({ now: Date.parse('2026-03-04T10:00:30Z') });
    const spy = vi.spyOn(globalThis, 'setTimeout');
    const at: number[] = [];
    const schedule = createSchedule({ name: 'post', cron: '0 * * * *', onTick: () => void at.push(Date.now()) });
    made.push(schedule);
    schedule.start();
    await vi.advanceTimersByTimeAsync(3 * 60 * 60_000);
    expect(at.map((ms) => new Date(ms).toISOString().slice(11, 16))).toEqual(['11:00', '12:00', '13:00']);
    expect(spy.mock.calls.length).toBeLessThanOrEqual(4);
    spy.mockRestore();
  });

  it('computes each run from the start, so runs that take a while do not drift', async () => {
    vi.useFakeTimers({ now: Date.parse('2026-03-04T10:00:00Z') });
    const start = Date.now();
    const at: number[] = [];
    const schedule = createSchedule({
      name: 'sample',
      intervalMs: 10_000,
      // Each run takes 700 ms: a chain armed "one interval after the previous run" would drift 0.7 s a run.
      onTick: async () => {
        at.push(Date.now() - start);
        await new Promise((resolve) => setTimeout(resolve, 700));
      },
    });
    made.push(schedule);
    schedule.start();
    await vi.advanceTimersByTimeAsync(40_500);
    expect(at).toEqual([10_000, 20_000, 30_000, 40_000]);
    expect(schedule.nextRunAt()).toBe(start + 50_000);
  });

  it('skips the runs a forward clock jump passed over (one run, no burst), and re-anchors after a jump back', async () => {
    vi.useFakeTimers({ now: Date.parse('2026-03-04T10:00:00Z') });
    const start = Date.now();
    const at: number[] = [];
    const schedule = createSchedule({ name: 'post', intervalMs: 60_000, onTick: () => void at.push(Date.now() - start) });
    made.push(schedule);
    schedule.start();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(at).toEqual([60_000]);
    // The wall clock leaps 10 minutes ahead (a suspended VM resumed): one run when the timer fires, then back on the grid.
    vi.setSystemTime(Date.now() + 10 * 60_000);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(at).toEqual([60_000, 12 * 60_000]);
    expect(schedule.nextRunAt()).toBe(start + 13 * 60_000);
    // Now it goes back an hour: when the pending timer fires (a minute later, timers do not follow
    // the wall clock), it runs and the grid moves there, rather than waiting out the hour.
    vi.setSystemTime(Date.now() - 60 * 60_000);
    const back = Date.now();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(at).toHaveLength(3);
    expect(at[2]! - (back - start)).toBe(60_000);
    expect(schedule.nextRunAt()).toBe(back + 2 * 60_000);
  });

  it('waits longer than setTimeout can in pieces, and honours firstDelayMs', async () => {
    vi.useFakeTimers({ now: Date.parse('2026-03-04T10:00:00Z') });
    const start = Date.now();
    const at: number[] = [];
    const month = 30 * 24 * 60 * 60_000;
    expect(month).toBeGreaterThan(MAX_TIMER_DELAY_MS);
    const schedule = createSchedule({ name: 'keep', intervalMs: month, firstDelayMs: 1_000, onTick: () => void at.push(Date.now() - start) });
    made.push(schedule);
    schedule.start();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(at).toEqual([1_000]);
    await vi.advanceTimersByTimeAsync(MAX_TIMER_DELAY_MS);
    expect(at).toEqual([1_000]);
    await vi.advanceTimersByTimeAsync(month - MAX_TIMER_DELAY_MS);
    expect(at).toEqual([1_000, 1_000 + month]);
  });

  it('nextIntervalRun is the first grid point after now', () => {
    expect(nextIntervalRun(1_000, 100, 500)).toBe(1_000);
    expect(nextIntervalRun(1_000, 100, 1_000)).toBe(1_100);
    expect(nextIntervalRun(1_000, 100, 1_099)).toBe(1_100);
    expect(nextIntervalRun(1_000, 100, 1_350)).toBe(1_400);
  });
});

describe('createManualScheduler', () => {
  it('runs a schedule only when the test ticks it, and only while started', async () => {
    const scheduler = createManualScheduler();
    let runs = 0;
    const schedule = scheduler.factory({ name: 'sample', intervalMs: 300_000, onTick: () => void (runs += 1) });
    await scheduler.get('sample')!.tick();
    expect(runs).toBe(0);
    schedule.start();
    await scheduler.get('sample')!.tick();
    await scheduler.get('sample')!.tick();
    expect(runs).toBe(2);
    schedule.stop();
    await scheduler.get('sample')!.tick();
    expect(runs).toBe(2);
    // trigger() runs whatever the timer's state, like croner's.
    await schedule.trigger();
    expect(runs).toBe(3);
  });

  it('fires delayMs schedules once they are due on the test clock', async () => {
    let now = 1_000;
    const scheduler = createManualScheduler(() => now);
    let runs = 0;
    scheduler.factory({ name: 'retry', delayMs: 500, onTick: () => void (runs += 1) }).start();
    expect(scheduler.get('retry')!.dueAt).toBe(1_500);
    expect(await scheduler.runDue()).toBe(0);
    now = 1_500;
    expect(await scheduler.runDue()).toBe(1);
    expect(await scheduler.runDue()).toBe(0);
    expect(runs).toBe(1);
  });

  it('catches errors like the real schedule', async () => {
    const errors: unknown[] = [];
    const scheduler = createManualScheduler();
    scheduler.factory({ name: 'post', intervalMs: 1_000, onTick: () => { throw new Error('nope'); }, onError: (e) => errors.push(e) }).start();
    await expect(scheduler.get('post')!.tick()).resolves.toBeUndefined();
    expect(errors).toHaveLength(1);
  });
});
