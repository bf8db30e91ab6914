import { appendFile, cp, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger, type AgentLogger } from '../../../../src/log/agent-logger.js';
import { StoreError } from '../../../../src/store/errors.js';
import { createFileVoteLedger } from '../../../../src/votes/ledger-file.js';
import { createLocalReminderStore, type LocalReminderStoreOptions } from '../../../../src/votes/reminders/local-store.js';
import { recordOfVote, type ReminderRecord } from '../../../../src/votes/reminders/schedule.js';
import { voteAt } from '../../../helpers/votes.js';

/*
 * The reminders' own journal (`<state.directory>/reminders.journal`) across reopenings: what is
 * scheduled and the last sent come back, a compaction keeps them, damage is repaired, a newer
 * version is refused, and the schedule a version 2 vote journal held is carried over once.
 */

const HOUR = 3_600_000;
const T0 = Date.parse('2025-01-01T12:00:00.000Z');
const FIXTURE = fileURLToPath(new URL('../../../fixtures/journals/main/', import.meta.url));
const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function directory(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'reminders-store-'));
  dirs.push(dir);
  return dir;
}

const reminder = (user: string, createdMs: number): ReminderRecord => recordOfVote(voteAt(user, createdMs, { platformId: `9${user}` }))!;
const users = (records: readonly ReminderRecord[]) => records.map((record) => record.userId).sort();

async function opened(options: LocalReminderStoreOptions) {
  const store = createLocalReminderStore(options);
  await store.open();
  return store;
}

type Store = Awaited<ReturnType<typeof opened>>;
const schedule = (store: Store, records: ReminderRecord[]) => store.schedule(records);
/** Every reminder the store holds. */
const held = async (store: Store) => (await store.list(1_000)).map((due) => due.record);
/** What is due at `now`, ended as sent. */
async function sendDue(store: Store, now: number): Promise<ReminderRecord[]> {
  const due = (await store.due(now, 1_000)).map((each) => each.record);
  await store.end(due, []);
  return due;
}
const lastSent = async (store: Store) => (await store.lastSent()).map((due) => due.record);

describe('the reminders journal', () => {
  it('gives back the schedule and the last sent at the next open, ended reminders gone', async () => {
    const dir = await directory();
    const first = await opened({ directory: dir });
    const [a, b, c, newerB] = [reminder('a', T0), reminder('b', T0 + 1), reminder('c', T0 + 2), reminder('b', T0 + HOUR)];
    await schedule(first, [a, b, c]);
    expect(await schedule(first, [newerB])).toEqual({ scheduled: 1, replaced: 1, soonest: newerB.expiresMs });
    expect(await sendDue(first, a.expiresMs)).toEqual([a]);
    await first.close();
    expect(((await stat(join(dir, 'reminders.journal'))).mode & 0o777).toString(8)).toBe('600');

    const second = await opened({ directory: dir });
    expect(users(await held(second))).toEqual(['b', 'c']);
    expect((await held(second)).find((record) => record.userId === 'b')).toEqual(newerB);
    expect(await lastSent(second)).toEqual([a]);
    // Skipped (too late) is an end too, but not a reminder sent.
    await second.end([], [c]);
    await second.close();
    const third = await opened({ directory: dir });
    expect(users(await held(third))).toEqual(['b']);
    expect(await lastSent(third)).toEqual([a]);
    await third.close();
  });

  it('compacts to what it holds: the schedule and the last ten sent survive the rewrite', async () => {
    const dir = await directory();
    const store = await opened({ directory: dir, compactMinBytes: 0, compactRatio: 2 });
    const records = Array.from({ length: 40 }, (_, i) => reminder(`u${i}`, T0 + i));
    for (let round = 0; round < 4; round++) {
      await schedule(store, records.slice(round * 10, round * 10 + 10));
      await sendDue(store, T0 + 12 * HOUR + round * 10 + 5);
    }
    await store.close();
    const text = await readFile(join(dir, 'reminders.journal'), 'utf8');
    // Every reminder was scheduled and ended: a rewrite has dropped most of those lines.
    expect(text.split('\n').length).toBeLessThan(60);
    const again = await opened({ directory: dir });
    expect(users(await held(again))).toEqual(users(records.slice(36)));
    expect((await lastSent(again)).map((record) => record.userId)).toEqual(Array.from({ length: 10 }, (_, i) => `u${35 - i}`));
    await again.close();
  });

  it('drops a torn last line and a damaged line, rewrites itself without them, and says so', async () => {
    const dir = await directory();
    const store = await opened({ directory: dir });
    await schedule(store, [reminder('a', T0), reminder('b', T0)]);
    await store.close();
    await appendFile(join(dir, 'reminders.journal'), 'garbage{\n{"t":"s","r":{"projectId":"8"');
    const warnings: string[] = [];
    const logger: AgentLogger = { ...silentLogger, warn: (_obj, msg) => void warnings.push(msg ?? '') };
    const repaired = await opened({ directory: dir, logger });
    expect(users(await held(repaired))).toEqual(['a', 'b']);
    expect(warnings).toEqual([expect.stringContaining('had damaged lines: kept its 2 readable records and rewrote it')]);
    expect(await readFile(join(dir, 'reminders.journal'), 'utf8')).not.toContain('garbage');
    await repaired.close();
  });

  it('refuses a journal written by a newer version, and leaves it alone', async () => {
    const dir = await directory();
    const text = '{"t":"journal","format":"listing-agent reminders","version":9}\n{"t":"z"}\n';
    await writeFile(join(dir, 'reminders.journal'), text);
    const error = await createLocalReminderStore({ directory: dir }).open().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(StoreError);
    expect((error as Error).message).toMatch(/written by a newer listing-agent \(reminders journal version 9\); upgrade listing-agent or set state\.directory/);
    expect(await readFile(join(dir, 'reminders.journal'), 'utf8')).toBe(text);
  });
});

describe('the schedule of a version 2 vote journal, carried over', () => {
  const scheduled = ['200000000000000001', '200000000000000002', '200000000000000003', '200000000000000004', '200000000000000005'];

  it('at the first open, once: what was sent after it does not come back from the old journal', async () => {
    const dir = await directory();
    await cp(FIXTURE, dir, { recursive: true });
    const first = await opened({ directory: dir });
    expect(users(await held(first))).toEqual(scheduled);
    expect((await lastSent(first)).map((record) => record.userId)).toEqual(['200000000000000006']);
    await sendDue(first, Date.parse('2026-03-05T00:00:00.000Z'));
    await first.close();
    // The vote journal still holds its version 2 records: they are not read again.
    const second = await opened({ directory: dir });
    expect(await second.size()).toBe(0);
    expect(await second.lastSent()).toHaveLength(6);
    await second.close();
  });

  it('from the copy the vote ledger kept when it opened first and rewrote the journal; the copy goes once carried over', async () => {
    const dir = await directory();
    await cp(FIXTURE, dir, { recursive: true });
    const ledger = createFileVoteLedger({ directory: dir, now: () => Date.parse('2026-03-04T10:05:00.000Z') });
    await ledger.open();
    await ledger.close();
    expect(await readFile(join(dir, 'votes.journal'), 'utf8')).not.toContain('["r"');
    expect(await readdir(dir)).toContain('votes.journal.v2');
    const first = await opened({ directory: dir });
    expect(users(await held(first))).toEqual(scheduled);
    await first.close();
    const second = await opened({ directory: dir });
    expect(users(await held(second))).toEqual(scheduled);
    expect(await readdir(dir)).not.toContain('votes.journal.v2');
    await second.close();
  });
});
