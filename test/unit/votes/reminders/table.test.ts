import { describe, expect, it } from 'vitest';
import type { ReminderRecord } from '../../../../src/votes/reminders/schedule.js';
import { joinDecimal, voteKey } from '../../../../src/contract/vote-key.js';
import { idParts, splitId } from '../../../../src/votes/reminders/table-index.js';
import { voteKeyPartsInto } from '../../../../src/votes/reminders/schedule.js';
import { ReminderTable, type TableResult, type VoteBatch } from '../../../../src/votes/reminders/table.js';
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

describe('decimal IDs packed into numbers', () => {
  it('splits canonical decimal IDs up to 24 digits and gives the same text back', () => {
    for (const id of ['0', '7', '123456789', '1234567890', '803190510032756736', '18446744073709551615', '100000000000000000042', '999999999999999999999999']) {
      expect(splitId(id)).toBe(true);
      expect(joinDecimal(idParts[0]!, idParts[1]!)).toBe(id);
    }
  });

  it('leaves anything else as text: empty, leading zero, not digits, too long', () => {
    for (const id of ['', '00', '0123', '12a4', '-1', ' 1', '1 ', '１２', '1234567890123456789012345', 'voter']) expect(splitId(id)).toBe(false);
  });
});

describe('the reminder table (typed arrays, a hash index, a heap of slots)', () => {
  it('gives back exactly what it was given: text IDs, no platform ID, odd weights, both roads', () => {
    const table = new ReminderTable();
    const given = [
      reminder('alice', T0, { platformId: 'discord-alice', weight: 1.5, road: 'webhook' }),
      reminder('0042', T0 + 1, { platformId: null, weight: 300 }),
      reminder('18446744073709551615', T0 + 2, { platformId: '18446744073709551615', weight: 0 }),
      reminder('7', T0 + 3, { projectId: 'another project', weight: -2 }),
    ];
    for (const r of given) expect(table.put(r)).toBe('scheduled');
    expect(table.takeDue(T0 + 13 * HOUR, 2 * HOUR).send).toEqual(given);
    expect(table.size).toBe(0);
  });

  it('keeps one reminder per voter and project: a newer vote replaces in place, an older one is known', () => {
    const table = new ReminderTable({ delayMs: HOUR });
    expect(table.put(reminder('5', T0))).toBe('scheduled');
    expect(table.put(reminder('5', T0, { projectId: 'other' }))).toBe('scheduled');
    expect(table.put(reminder('5', T0 - HOUR))).toBe('known');
    expect(table.put(reminder('5', T0 + 2 * HOUR, { platformId: 'now text', weight: 2.5 }))).toBe('replaced');
    expect(table.size).toBe(2);
    expect(table.list().map(({ due, record }) => [record.projectId, record.createdMs, due])).toEqual([
      ['other', T0, T0 + 13 * HOUR],
      ['803190510032756736', T0 + 2 * HOUR, T0 + 15 * HOUR],
    ]);
    expect(table.remove('803190510032756736', '5', T0)).toBe(false); // not its vote any more
    expect(table.remove('803190510032756736', '5', T0 + 2 * HOUR)).toBe(true);
    expect(table.records()).toEqual([reminder('5', T0, { projectId: 'other' })]);
  });

  it('reads a vote as the rules say: no reminder for an expired or undated vote', () => {
    const table = new ReminderTable();
    const vote = (createdAt: string, expiresAt: string): Vote => ({ key: `1:${createdAt}`, userId: '1', platformId: null, projectId: '8', weight: 1, createdAt, expiresAt, road: 'poll' });
    expect(table.add(vote(new Date(T0 - 13 * HOUR).toISOString(), ''), T0)).toBe('expired');
    expect(table.add(vote('not a date', ''), T0)).toBe('invalid');
    // Another ISO spelling than toISOString's goes through Date.parse: the same instant.
    expect(table.add(vote('2025-01-01T12:00:00+00:00', '2025-01-02T00:00:00+00:00'), T0)).toBe('scheduled');
    expect(table.records()[0]).toMatchObject({ createdMs: T0, expiresMs: T0 + 12 * HOUR });
  });

  it('agrees with a plain model over thousands of random adds, replacements, removals and takes', () => {
    const next = random(20_250_101);
    const table = new ReminderTable({ delayMs: 30 * 60_000 });
    const model = new Map<string, ReminderRecord>();
    const users = Array.from({ length: 300 }, (_, i) => (i % 7 === 0 ? `text-${i}` : `1${String(i * 7919).padStart(17, '0')}`));
    const slot = (r: Pick<ReminderRecord, 'projectId' | 'userId'>) => `${r.projectId}\t${r.userId}`;
    const due = (r: ReminderRecord) => r.expiresMs + 30 * 60_000;
    const order = (a: ReminderRecord, b: ReminderRecord) => a.expiresMs - b.expiresMs || a.createdMs - b.createdMs;
    let now = T0;
    for (let step = 0; step < 6_000; step++) {
      const roll = next();
      const userId = users[Math.floor(next() * users.length)]!;
      const projectId = next() < 0.8 ? 'p1' : 'p2';
      if (roll < 0.6) {
        const r = reminder(userId, now - Math.floor(next() * 10 * HOUR), { projectId, expiresMs: now + Math.floor(next() * 12 * HOUR) });
        const old = model.get(slot(r));
        const expected = old === undefined ? 'scheduled' : old.createdMs >= r.createdMs ? 'known' : 'replaced';
        expect(table.put(r)).toBe(expected);
        if (expected !== 'known') model.set(slot(r), r);
      } else if (roll < 0.75) {
        const old = model.get(slot({ projectId, userId }));
        const createdMs = old !== undefined && next() < 0.7 ? old.createdMs : now;
        expect(table.remove(projectId, userId, createdMs)).toBe(old?.createdMs === createdMs);
        if (old?.createdMs === createdMs) model.delete(slot(old));
      } else if (roll < 0.9) {
        now += Math.floor(next() * HOUR);
        const taken = table.takeDue(now, HOUR);
        const expected = [...model.values()].filter((r) => due(r) <= now).sort(order);
        expect([...taken.send, ...taken.late].sort(order)).toEqual(expected);
        expect(taken.late).toEqual(expected.filter((r) => now - due(r) > HOUR));
        for (const r of expected) model.delete(slot(r));
      } else {
        const sorted = [...model.values()].sort(order);
        expect(table.list(5).map((entry) => entry.record)).toEqual(sorted.slice(0, 5));
        expect(table.nextDue()).toBe(sorted[0] === undefined ? undefined : due(sorted[0]));
      }
      expect(table.size).toBe(model.size);
    }
    expect(table.records().sort(order)).toEqual([...model.values()].sort(order));
  });

  it('agrees with the model as it grows across chunks of slots, frees slots and reuses them', () => {
    const next = random(1024);
    const table = new ReminderTable();
    const model = new Map<string, ReminderRecord>();
    const key = (r: Pick<ReminderRecord, 'projectId' | 'userId'>) => `${r.projectId}\t${r.userId}`;
    const order = (a: ReminderRecord, b: ReminderRecord) => a.expiresMs - b.expiresMs || a.createdMs - b.createdMs;
    const check = () => {
      expect(table.size).toBe(model.size);
      expect(table.records().sort(order)).toEqual([...model.values()].sort(order));
    };
    let now = T0;
    // Three rounds: fill past two or three chunk boundaries (1,024 slots each), replace some, take half.
    for (let round = 0; round < 3; round++) {
      for (let step = 0; step < 2_600; step++) {
        const i = Math.floor(next() * 4_000);
        const userId = i % 11 === 0 ? `text-${i}` : `9${String(i * 104_729).padStart(17, '0')}`;
        const r = reminder(userId, now + step, { projectId: i % 5 === 0 ? 'p2' : 'p1', expiresMs: now + Math.floor(next() * 12 * HOUR), weight: i % 13 === 0 ? 0.5 : i % 256, platformId: i % 17 === 0 ? null : `${i + 1}` });
        const old = model.get(key(r));
        expect(table.put(r)).toBe(old === undefined ? 'scheduled' : 'replaced');
        model.set(key(r), r);
      }
      check();
      now += 6 * HOUR;
      const taken = table.takeDue(now, 24 * HOUR);
      const expected = [...model.values()].filter((r) => r.expiresMs <= now).sort(order);
      expect(taken.send).toEqual(expected);
      for (const r of expected) model.delete(key(r));
      check();
      expect(table.nextDue()).toBe([...model.values()].sort(order)[0]?.expiresMs);
    }
    expect(table.arrayBytes()).toBeLessThanOrEqual(4 * 1024 * 54 + 64 * 1024);
  });

  it('holds 100,000 reminders in at most 100 bytes of typed arrays each, and reuses the slots it frees', () => {
    const table = new ReminderTable();
    for (let i = 0; i < 100_000; i++) table.put(reminder(`3${String(i * 13).padStart(17, '0')}`, T0 + i));
    expect(table.size).toBe(100_000);
    const bytes = table.arrayBytes();
    expect(bytes / 100_000).toBeLessThanOrEqual(100);
    expect(table.takeDue(T0 + 13 * HOUR, 2 * HOUR).send).toHaveLength(100_000);
    for (let i = 0; i < 100_000; i++) table.put(reminder(`4${String(i).padStart(17, '0')}`, T0 + i));
    expect(table.arrayBytes()).toBe(bytes);
    table.clear();
    expect(table.size).toBe(0);
    expect(table.put(reminder('1', T0))).toBe('scheduled');
    expect(table.nextDue()).toBe(T0 + 12 * HOUR);
  });

  it('schedules a batch as inserting its votes one after another would, and counts what it did', () => {
    const next = random(4_242);
    const one = new ReminderTable({ delayMs: 60_000 });
    const many = new ReminderTable({ delayMs: 60_000 });
    const users = Array.from({ length: 500 }, (_, i) => (i % 9 === 0 ? `text-${i}` : i % 13 === 0 ? `0${i}` : `7${String(i * 7_919).padStart(17, '0')}`));
    const batch = { votes: [] as Vote[], count: 0, expires: new Float64Array(64), keyParts: new Float64Array(3 * 64) };
    const counted = { scheduled: 0, replaced: 0 };
    const expected = { scheduled: 0, replaced: 0 };
    const order = (a: ReminderRecord, b: ReminderRecord) => a.expiresMs - b.expiresMs || a.createdMs - b.createdMs || a.userId.localeCompare(b.userId) || a.projectId.localeCompare(b.projectId);
    let now = T0;
    for (let round = 0; round < 200; round++) {
      batch.count = Math.floor(next() * 64);
      for (let i = 0; i < batch.count; i++) {
        const userId = users[Math.floor(next() * users.length)]!;
        const createdMs = now - Math.floor(next() * 6 * HOUR);
        // Mostly the key voteKey makes; now and then another user's key, or a key of another form.
        const roll = next();
        const key = roll < 0.9 ? voteKey(userId, createdMs) : roll < 0.95 ? voteKey('55', createdMs) : `${userId}:${new Date(createdMs).toISOString()}`;
        const vote: Vote = { key, userId, platformId: next() < 0.1 ? null : next() < 0.1 ? `p-${i}` : String(1e15 + i), projectId: next() < 0.8 ? 'p1' : 'p2', weight: next() < 0.1 ? 2.5 : 1, createdAt: new Date(createdMs).toISOString(), expiresAt: '', road: next() < 0.5 ? 'poll' : 'webhook' };
        batch.votes[i] = vote;
        batch.expires[i] = createdMs + 12 * HOUR;
        if (!voteKeyPartsInto(vote, batch.keyParts, 3 * i)) batch.keyParts[3 * i] = Number.NaN;
        const result: TableResult = one.insert(vote, createdMs + 12 * HOUR);
        if (result === 'scheduled' || result === 'replaced') expected[result] += 1;
      }
      many.insertBatch(batch as VoteBatch, counted);
      expect(counted).toEqual(expected);
      expect(many.size).toBe(one.size);
      now += Math.floor(next() * HOUR);
      if (round % 20 === 19) expect(many.takeDue(now + 12 * HOUR, HOUR)).toEqual(one.takeDue(now + 12 * HOUR, HOUR));
    }
    expect(expected.scheduled).toBeGreaterThan(1_000);
    expect(expected.replaced).toBeGreaterThan(500);
    expect(many.records().sort(order)).toEqual(one.records().sort(order));
  });
});
