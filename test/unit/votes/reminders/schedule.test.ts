import { describe, expect, it } from 'vitest';
import { createReminderSchedule, recordOfVote, type ReminderRecord } from '../../../../src/votes/reminders/schedule.js';
import type { Vote } from '../../../../src/votes/types.js';
import { random } from '../../../helpers/random.js';

const HOUR = 3_600_000;
const T0 = Date.parse('2025-01-01T12:00:00.000Z');

const reminder = (userId: string, createdMs: number, extra: Partial<ReminderRecord> = {}): ReminderRecord => ({
  projectId: '803190510032756736',
  userId,
  createdMs,
  expiresMs: createdMs + 12 * HOUR,
  platformId: `2${userId.padStart(17, '0')}`.slice(0, 18),
  weight: 1,
  road: 'poll',
  ...extra,
});

describe('a reminder of a vote', () => {
  it("is due at the vote's expires_at, or created + 12 h when expires_at is absent; none for an undated vote", () => {
    const vote = (createdAt: string, expiresAt: string): Vote => ({ key: `1:${createdAt}`, userId: '1', platformId: null, projectId: '8', weight: 1, createdAt, expiresAt, road: 'poll' });
    expect(recordOfVote(vote(new Date(T0).toISOString(), new Date(T0 + 2 * HOUR).toISOString()))).toMatchObject({ createdMs: T0, expiresMs: T0 + 2 * HOUR });
    expect(recordOfVote(vote(new Date(T0).toISOString(), ''))).toMatchObject({ createdMs: T0, expiresMs: T0 + 12 * HOUR });
    // Another ISO spelling than toISOString's goes through Date.parse: the same instant.
    expect(recordOfVote(vote('2025-01-01T12:00:00+00:00', '2025-01-02T00:00:00+00:00'))).toMatchObject({ createdMs: T0, expiresMs: T0 + 12 * HOUR });
    expect(recordOfVote(vote('not a date', ''))).toBeUndefined();
  });
});

describe('the reminder schedule (a Map by project and voter)', () => {
  it('gives back exactly what it was given: text IDs, no platform ID, odd weights, both roads', () => {
    const schedule = createReminderSchedule();
    const given = [
      reminder('alice', T0, { platformId: 'discord-alice', weight: 1.5, road: 'webhook' }),
      reminder('0042', T0 + 1, { platformId: null, weight: 300 }),
      reminder('18446744073709551615', T0 + 2, { platformId: '18446744073709551615', weight: 0 }),
      reminder('7', T0 + 3, { projectId: 'another project', weight: -2 }),
    ];
    for (const r of given) expect(schedule.put(r)).toBe('scheduled');
    expect(schedule.due(T0 + 13 * HOUR)).toEqual(given.map((record) => ({ record, due: record.expiresMs })));
    expect(schedule.records()).toHaveLength(4);
  });

  it('keeps one reminder per voter and project: a newer vote replaces, an older one is known', () => {
    const schedule = createReminderSchedule(HOUR);
    expect(schedule.put(reminder('5', T0))).toBe('scheduled');
    expect(schedule.put(reminder('5', T0, { projectId: 'other' }))).toBe('scheduled');
    expect(schedule.put(reminder('5', T0 - HOUR))).toBe('known');
    expect(schedule.put(reminder('5', T0 + 2 * HOUR, { platformId: 'now text', weight: 2.5 }))).toBe('replaced');
    expect(schedule.size).toBe(2);
    expect(schedule.list().map(({ due, record }) => [record.projectId, record.createdMs, due])).toEqual([
      ['other', T0, T0 + 13 * HOUR],
      ['803190510032756736', T0 + 2 * HOUR, T0 + 15 * HOUR],
    ]);
    expect(schedule.remove('803190510032756736', '5', T0)).toBe(false); // not its vote any more
    expect(schedule.remove('803190510032756736', '5', T0 + 2 * HOUR)).toBe(true);
    expect(schedule.records()).toEqual([reminder('5', T0, { projectId: 'other' })]);
  });

  it('lists what is due, soonest first, and knows the next due once those are removed', () => {
    const schedule = createReminderSchedule();
    for (const r of [reminder('2', T0 + 2 * HOUR), reminder('1', T0), reminder('3', T0 + 5 * HOUR)]) schedule.put(r);
    const due = schedule.due(T0 + 15 * HOUR);
    expect(due.map((each) => each.record)).toEqual([reminder('1', T0), reminder('2', T0 + 2 * HOUR)]);
    expect(schedule.nextDue()).toBe(T0 + 12 * HOUR);
    for (const { record } of due) schedule.remove(record.projectId, record.userId, record.createdMs);
    expect(schedule.nextDue()).toBe(T0 + 17 * HOUR);
  });

  it('agrees with a plain model over thousands of random puts, replacements, removals and takes', () => {
    const next = random(20_250_101);
    const schedule = createReminderSchedule(30 * 60_000);
    const model = new Map<string, ReminderRecord>();
    const users = Array.from({ length: 300 }, (_, i) => (i % 7 === 0 ? `text-${i}` : `1${String(i * 7919).padStart(17, '0')}`));
    const slot = (r: Pick<ReminderRecord, 'projectId' | 'userId'>) => `${r.projectId}\t${r.userId}`;
    const due = (r: ReminderRecord) => r.expiresMs + 30 * 60_000;
    const text = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
    const order = (a: ReminderRecord, b: ReminderRecord) => a.expiresMs - b.expiresMs || a.createdMs - b.createdMs || text(a.userId, b.userId) || text(a.projectId, b.projectId);
    let now = T0;
    for (let step = 0; step < 6_000; step++) {
      const roll = next();
      const userId = users[Math.floor(next() * users.length)]!;
      const projectId = next() < 0.8 ? 'p1' : 'p2';
      if (roll < 0.6) {
        const r = reminder(userId, now - Math.floor(next() * 10 * HOUR), { projectId, expiresMs: now + Math.floor(next() * 12 * HOUR) });
        const old = model.get(slot(r));
        const expected = old === undefined ? 'scheduled' : old.createdMs >= r.createdMs ? 'known' : 'replaced';
        expect(schedule.put(r)).toBe(expected);
        if (expected !== 'known') model.set(slot(r), r);
      } else if (roll < 0.75) {
        const old = model.get(slot({ projectId, userId }));
        const createdMs = old !== undefined && next() < 0.7 ? old.createdMs : now;
        expect(schedule.remove(projectId, userId, createdMs)).toBe(old?.createdMs === createdMs);
        if (old?.createdMs === createdMs) model.delete(slot(old));
      } else if (roll < 0.9) {
        now += Math.floor(next() * HOUR);
        const taken = schedule.due(now);
        const expected = [...model.values()].filter((r) => due(r) <= now).sort(order);
        expect(taken.map((each) => each.record).sort(order)).toEqual(expected);
        expect(taken.map((each) => each.due)).toEqual(expected.map(due).sort((a, b) => a - b));
        for (const { record } of taken) expect(schedule.remove(record.projectId, record.userId, record.createdMs)).toBe(true);
        for (const r of expected) model.delete(slot(r));
      } else {
        const sorted = [...model.values()].sort(order);
        expect(schedule.list(5).map((entry) => entry.record)).toEqual(sorted.slice(0, 5));
        expect(schedule.nextDue()).toBe(sorted[0] === undefined ? undefined : due(sorted[0]));
      }
      expect(schedule.size).toBe(model.size);
    }
    expect(schedule.records().sort(order)).toEqual([...model.values()].sort(order));
  });
});
