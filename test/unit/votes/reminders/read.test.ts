import { cp, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createLocalReminderStore } from '../../../../src/votes/reminders/local-store.js';
import { readFileReminders } from '../../../../src/votes/reminders/read.js';
import { recordOfVote } from '../../../../src/votes/reminders/schedule.js';
import { voteAt } from '../../../helpers/votes.js';

/*
 * What `listing-agent votes reminders` reads beside a running agent, without its lock and writing
 * nothing: the reminders' journal, or, before this version first started on the directory, the
 * journals an earlier version kept the schedule in.
 */

const HOUR = 3_600_000;
const T0 = Date.parse('2025-01-01T12:00:00.000Z');
const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function directory(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'reminders-read-'));
  dirs.push(dir);
  return dir;
}

describe('reading the reminders of a state directory beside the agent', () => {
  it('lists the next due, soonest first, how many, and the last sent, newest first', async () => {
    const dir = await directory();
    const store = createLocalReminderStore({ directory: dir, delayMs: 5 * 60_000 });
    await store.open();
    const records = Array.from({ length: 14 }, (_, i) => recordOfVote(voteAt(`u${i}`, T0 + i * 60_000))!);
    await store.schedule(records);
    await store.end(records.slice(0, 3), []);
    const reading = await readFileReminders(dir, 5 * 60_000, 2);
    expect(reading).toMatchObject({ path: join(dir, 'reminders.journal'), exists: true, size: 11 });
    expect(reading.next.map((info) => info.userId)).toEqual(['u3', 'u4']);
    expect(reading.next[0]).toEqual({
      voteKey: `u3:${T0 + 3 * 60_000}`,
      userId: 'u3',
      platformId: null,
      projectId: '8',
      expiresAt: new Date(T0 + 3 * 60_000 + 12 * HOUR).toISOString(),
      dueAt: new Date(T0 + 3 * 60_000 + 12 * HOUR + 5 * 60_000).toISOString(),
    });
    expect(reading.lastSent.map((info) => info.userId)).toEqual(['u2', 'u1']);
    await store.close();
  });

  it('reads the schedule a version 2 journal held before this version started there, and writes nothing', async () => {
    const dir = await directory();
    await cp(fileURLToPath(new URL('../../../fixtures/journals/main/', import.meta.url)), dir, { recursive: true });
    const before = await readdir(dir);
    const reading = await readFileReminders(dir, 0);
    expect(reading).toMatchObject({ exists: true, size: 5 });
    expect(reading.next.map((info) => info.userId)).toEqual(['200000000000000002', '200000000000000003', '200000000000000004', '200000000000000005', '200000000000000001']);
    expect(reading.lastSent.map((info) => info.voteKey)).toEqual(['200000000000000006:1772575260000']);
    expect(await readdir(dir)).toEqual(before);
  });

  it('says there is no schedule in a directory without one', async () => {
    expect(await readFileReminders(await directory(), 0)).toMatchObject({ exists: false, size: 0, next: [], lastSent: [] });
  });
});
