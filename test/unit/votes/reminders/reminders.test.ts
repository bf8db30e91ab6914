import { describe, expect, it } from 'vitest';
import { silentLogger, type AgentLogger } from '../../../../src/log/agent-logger.js';
import { MAX_TIMER_DELAY_MS } from '../../../../src/contract/timer-delay.js';
import { createLocalReminderStore } from '../../../../src/votes/reminders/local-store.js';
import { createReminders, type RemindersOptions } from '../../../../src/votes/reminders/reminders.js';
import { createReminderSchedule, recordOfVote, type ReminderRecord } from '../../../../src/votes/reminders/schedule.js';
import type { Vote } from '../../../../src/votes/types.js';
import { manualTime } from '../pipeline-harness.js';

const HOUR = 3_600_000;
const T0 = Date.parse('2025-01-01T12:00:00.000Z');

function vote(userId: string, createdMs: number, expiresMs: number | null = createdMs + 12 * HOUR): Vote {
  return {
    key: `${userId}:${createdMs}`,
    userId,
    platformId: `p${userId}`,
    projectId: '8',
    weight: 1,
    createdAt: new Date(createdMs).toISOString(),
    expiresAt: expiresMs === null ? '' : new Date(expiresMs).toISOString(),
    road: 'poll',
  };
}

const record = (v: Vote): ReminderRecord => recordOfVote(v)!;
/** The vote keys a store holds, soonest first. */
const keysOf = async (store: ReturnType<typeof createLocalReminderStore>) => (await store.list(100)).map(({ record: r }) => `${r.userId}:${r.createdMs}`);

function harness(extra: Partial<RemindersOptions> & { delayMs?: number } = {}, initial: ReminderRecord[] = []) {
  const time = manualTime(T0);
  const { delayMs, ...rest } = extra;
  const store = createLocalReminderStore(delayMs === undefined ? {} : { delayMs });
  void store.schedule(initial);
  const sent: Vote[] = [];
  const warnings: { obj: unknown; msg: string | undefined }[] = [];
  const logger: AgentLogger = { ...silentLogger, warn: (obj, msg) => void warnings.push({ obj, msg }), child: () => logger };
  const counts = { scheduled: 0, skipped: 0 };
  const reminders = createReminders({
    store,
    send: (votes) => {
      sent.push(...votes);
      return Promise.resolve();
    },
    logger,
    now: time.now,
    schedule: time.schedule,
    count: (result, n) => (counts[result] += n),
    ...rest,
  });
  return { time, store, sent, warnings, counts, reminders };
}

describe('reminder schedule (pure rules)', () => {
  it('is due at expires_at plus the delay, or created + 12 h when expires_at is absent', () => {
    const schedule = createReminderSchedule(5 * 60_000);
    schedule.put(record(vote('1', T0, T0 + 2 * HOUR)));
    schedule.put(record(vote('2', T0, null)));
    expect(schedule.list().map((entry) => entry.due)).toEqual([T0 + 2 * HOUR + 5 * 60_000, T0 + 12 * HOUR + 5 * 60_000]);
  });

  it('a newer vote of the same user supersedes the older reminder; an older or the same vote does not', () => {
    const schedule = createReminderSchedule(2 * HOUR);
    expect(schedule.put(record(vote('1', T0)))).toBe('scheduled');
    expect(schedule.put(record(vote('1', T0 + 13 * HOUR)))).toBe('replaced');
    expect(schedule.put(record(vote('1', T0)))).toBe('known');
    expect(schedule.put(record(vote('1', T0 + 13 * HOUR)))).toBe('known');
    // Only the newer one is ever due; the older one's time passes with nothing taken.
    expect(schedule.due(T0 + 14 * HOUR)).toEqual([]);
    expect(schedule.due(T0 + 27 * HOUR).map((due) => due.record)).toEqual([record(vote('1', T0 + 13 * HOUR))]);
    expect(schedule.size).toBe(1);
  });
});

describe('reminders (timer, store, sender)', () => {
  it('fires once at the due time with the reminder key, and arms one timer for the next only', async () => {
    const h = harness();
    await h.reminders.start();
    await h.reminders.schedule([vote('1', T0), vote('2', T0 + HOUR), vote('3', T0 + 2 * HOUR)]);
    expect(h.time.pending()).toBe(1);
    await h.time.advance(12 * HOUR - 1);
    expect(h.sent).toEqual([]);
    await h.time.advance(1);
    expect(h.sent.map((v) => v.key)).toEqual([`reminder:1:${T0}`]);
    expect(h.sent[0]).toMatchObject({ userId: '1', platformId: 'p1', projectId: '8', expiresAt: new Date(T0 + 12 * HOUR).toISOString() });
    expect(h.time.pending()).toBe(1);
    await h.time.advance(2 * HOUR);
    expect(h.sent.map((v) => v.userId)).toEqual(['1', '2', '3']);
    expect(await h.reminders.size()).toBe(0);
    expect(h.counts).toEqual({ scheduled: 3, skipped: 0 });
  });

  it('steps a 12 h lifetime in timer steps, and never arms a timer beyond 2^31 - 1 ms', async () => {
    const h = harness({ maxStepMs: HOUR, delayMs: 40 * 24 * HOUR });
    await h.reminders.start();
    await h.reminders.schedule([vote('1', T0)]);
    await h.time.advance(12 * HOUR + 40 * 24 * HOUR - 1);
    expect(h.sent).toEqual([]);
    await h.time.advance(1);
    expect(h.sent).toHaveLength(1);
    expect(Math.max(...h.time.delays)).toBeLessThanOrEqual(HOUR);
    const unstepped = harness({ delayMs: 40 * 24 * HOUR });
    await unstepped.reminders.start();
    await unstepped.reminders.schedule([vote('1', T0)]);
    expect(Math.max(...unstepped.time.delays)).toBe(MAX_TIMER_DELAY_MS);
    await unstepped.time.advance(12 * HOUR + 40 * 24 * HOUR);
    expect(unstepped.sent).toHaveLength(1);
  });

  it('sends at start what came due while down, skips (one warning with the count) what is later than maxLateness', async () => {
    const stale = [vote('1', T0 - 20 * HOUR), vote('2', T0 - 19 * HOUR)].map(record);
    const recent = record(vote('3', T0 - 12 * HOUR - 30 * 60_000));
    const future = record(vote('4', T0));
    const h = harness({}, [...stale, recent, future]);
    await h.reminders.start();
    expect(h.sent.map((v) => v.userId)).toEqual(['3']);
    expect(h.counts.skipped).toBe(2);
    expect(h.warnings).toHaveLength(1);
    expect(h.warnings[0]!.obj).toMatchObject({ skipped: 2 });
    expect((await h.store.list(10)).map((due) => due.record)).toEqual([future]);
  });

  it('logs skipped reminders once per start; those skipped later in the run in one summary per 10 min, and at stop', async () => {
    let leading = true;
    const MINUTE = 60_000;
    const h = harness({ maxLatenessMs: MINUTE, maxStepMs: MINUTE, mayFire: () => leading }, [record(vote('1', T0 - 13 * HOUR)), record(vote('2', T0 - 14 * HOUR))]);
    await h.reminders.start();
    expect(h.warnings.map((w) => w.obj)).toEqual([expect.objectContaining({ skipped: 2 })]);
    // Standing by past a reminder's due time plus maxLateness: the next look as the leader skips it, without a line of its own.
    await h.reminders.schedule([vote('3', T0 - 12 * HOUR + MINUTE)]);
    leading = false;
    await h.time.advance(3 * MINUTE);
    leading = true;
    await h.time.advance(MINUTE);
    expect(h.counts.skipped).toBe(3);
    expect(h.warnings).toHaveLength(1);
    // Ten minutes after the first line, a look writes the summary (no reminder need come due).
    await h.time.advance(6 * MINUTE);
    expect(h.warnings.map((w) => w.obj)).toEqual([expect.objectContaining({ skipped: 2 }), expect.objectContaining({ skipped: 1, sinceMs: 10 * MINUTE })]);
    // One more skipped, then a stop: the stop writes it.
    await h.reminders.schedule([vote('4', T0 - 12 * HOUR + 11 * MINUTE)]);
    leading = false;
    await h.time.advance(3 * MINUTE);
    leading = true;
    await h.time.advance(MINUTE);
    expect(h.warnings).toHaveLength(2);
    await h.reminders.stop();
    expect(h.warnings.map((w) => w.obj)).toEqual([expect.objectContaining({ skipped: 2 }), expect.objectContaining({ skipped: 1 }), expect.objectContaining({ skipped: 1, sinceMs: 4 * MINUTE })]);
    expect(h.counts.skipped).toBe(4);
    expect(h.sent).toEqual([]);
  });

  it('keeps a reminder the sender refused and hands it over again later', async () => {
    let fail = true;
    const sent: Vote[] = [];
    const h = harness({
      send: (votes) => {
        if (fail) return Promise.reject(new Error('ledger full'));
        sent.push(...votes);
        return Promise.resolve();
      },
      logger: { ...silentLogger, child: () => silentLogger },
    });
    await h.reminders.start();
    await h.reminders.schedule([vote('1', T0)]);
    await h.time.advance(12 * HOUR);
    expect(sent).toEqual([]);
    expect(await h.reminders.size()).toBe(1);
    fail = false;
    await h.time.advance(5_000);
    expect(sent.map((v) => v.userId)).toEqual(['1']);
    expect(await h.reminders.size()).toBe(0);
  });

  it('does not fire while mayFire is false (a standby), and fires once it is true', async () => {
    let leading = false;
    const h = harness({ mayFire: () => leading, maxStepMs: 60_000 });
    await h.reminders.start();
    await h.reminders.schedule([vote('1', T0)]);
    await h.time.advance(12 * HOUR + 5 * 60_000);
    expect(h.sent).toEqual([]);
    leading = true;
    await h.time.advance(60_000);
    expect(h.sent).toHaveLength(1);
  });

  it('the superseded reminder leaves the schedule when the newer vote is scheduled', async () => {
    const h = harness({ delayMs: 3 * HOUR });
    await h.reminders.start();
    await h.reminders.schedule([vote('1', T0)]);
    await h.time.advance(13 * HOUR);
    await h.reminders.schedule([vote('1', T0 + 13 * HOUR)]);
    expect(await keysOf(h.store)).toEqual([`1:${T0 + 13 * HOUR}`]);
    await h.time.advance(3 * HOUR);
    expect(h.sent).toEqual([]);
    expect(h.counts.skipped).toBe(1);
    await h.time.advance(12 * HOUR);
    expect(h.sent.map((v) => v.key)).toEqual([`reminder:1:${T0 + 13 * HOUR}`]);
  });
});

describe('reminders: what is scheduled, and when the timer is armed again', () => {
  it('schedules no reminder for a vote that arrived already expired, nor for one without a date', async () => {
    const h = harness();
    await h.reminders.start();
    await h.reminders.schedule([vote('1', T0 - 13 * HOUR), { ...vote('2', T0), key: '2:someday', createdAt: 'not a date' }]);
    expect(await h.reminders.size()).toBe(0);
    expect(h.counts.scheduled).toBe(0);
    await h.reminders.schedule([vote('3', T0 - 11 * HOUR)]);
    expect(await h.reminders.size()).toBe(1);
  });

  it('re-arms the one timer from the clock as a batch is scheduled: what a moved clock passed fires at once', async () => {
    let now = T0;
    const timers: { delay: number; fire: () => void; cancelled: boolean }[] = [];
    const sent: Vote[] = [];
    const reminders = createReminders({
      store: createLocalReminderStore(),
      send: (votes) => {
        sent.push(...votes);
        return Promise.resolve();
      },
      logger: silentLogger,
      now: () => now,
      maxStepMs: HOUR,
      schedule: (fire, delay) => {
        const timer = { delay, fire, cancelled: false };
        timers.push(timer);
        return () => void (timer.cancelled = true);
      },
    });
    await reminders.start();
    await reminders.schedule([vote('1', T0 - 11 * HOUR)]);
    expect(timers.filter((t) => !t.cancelled).map((t) => t.delay)).toEqual([HOUR]);
    // The clock jumps 2 h (an injected clock): the armed step has not fired yet; the next batch re-arms.
    now = T0 + 2 * HOUR;
    await reminders.schedule([vote('2', now)]);
    const armed = timers.filter((t) => !t.cancelled);
    expect(armed.map((t) => t.delay)).toEqual([0]);
    armed[0]!.fire();
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent.map((v) => v.key)).toEqual([`reminder:1:${T0 - 11 * HOUR}`]);
    await reminders.stop();
  });
});

describe("a reminder's key", () => {
  it("is reminder: and its vote's key, also for a vote fed by hand whose key and createdAt disagree", async () => {
    const h = harness();
    await h.reminders.start();
    const odd = { ...vote('21', T0 - 11 * HOUR), createdAt: new Date(T0 - 11 * HOUR + 60_000).toISOString() };
    const text = { ...vote('voter-22', T0 - 11 * HOUR), key: 'voter-22:custom' };
    await h.reminders.schedule([odd, text]);
    await h.time.advance(HOUR + 60_000);
    expect(h.sent.map((v) => v.key).sort()).toEqual([`reminder:${odd.key}`, `reminder:voter-22:${T0 - 11 * HOUR}`]);
  });
});
