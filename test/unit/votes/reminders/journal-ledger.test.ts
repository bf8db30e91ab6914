import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createFileVoteLedger, type FileVoteLedger } from '../../../../src/votes/ledger-file.js';
import type { JournalRecord } from '../../../../src/votes/ledger-records.js';
import { createLedgerReminderStore, createReminderReplay, scheduledRecord, type LedgerReminderStore } from '../../../../src/votes/reminders/journal-ledger.js';
import { recordOfVote, reminderVote } from '../../../../src/votes/reminders/schedule.js';
import { ReminderTable } from '../../../../src/votes/reminders/table.js';
import { HOUR, makeVote, removeVoteDirs, T0, voteDir } from '../votes-fixtures.js';

/*
 * The reminder schedule riding the rewards' vote journal: the replay rules (pure), then the real
 * file ledger across reopenings: a vote's own record is its reminder, and only what the votes
 * cannot say is written (an expired arrival, an end, a snapshot).
 */

const NOW = T0 + HOUR;
const r = (f: unknown[]): JournalRecord => ({ t: 'r', f });
const p = (vote: ReturnType<typeof makeVote>): JournalRecord => ({ t: 'p', v: vote });
const keys = (table: ReminderTable) => table.list().map(({ record }) => `${record.userId}:${record.createdMs}`).sort();

describe('replaying reminder records (pure)', () => {
  it('derives a reminder from each vote recorded while "on", by the rules of their arrival order', () => {
    const table = new ReminderTable();
    const replay = createReminderReplay(table, true);
    const [a, b, c, olderB] = [makeVote(1), makeVote(2), makeVote(3), makeVote(2, -HOUR)];
    for (const record of [p(a), r(['on']), p(b), r(['x', c.key]), p(c), p(olderB)]) replay(record);
    // a: before "on"; c: arrived expired (its x came just before it); olderB: b is newer.
    expect(keys(table)).toEqual([b.key]);
    const d = makeVote(4);
    for (const record of [r(['x', 'someone else:1']), p(d)]) replay(record);
    expect(keys(table)).toEqual([b.key, d.key]);
  });

  it('applies ends to the same vote only, takes snapshots, and forgets all at "off"', () => {
    const table = new ReminderTable();
    const replay = createReminderReplay(table, true);
    const [a, b] = [makeVote(1), makeVote(2)];
    replay(r(['on']));
    replay(scheduledRecord(recordOfVote(a)!));
    replay(p(b));
    replay(r(['d', b.projectId, b.userId, T0 - 1]));
    expect(keys(table)).toEqual([a.key, b.key]);
    replay(r(['d', b.projectId, b.userId, T0]));
    expect(keys(table)).toEqual([a.key]);
    replay(r(['s', 'bad']));
    replay(r(['off']));
    replay(p(makeVote(5)));
    expect(table.size).toBe(0);
  });

  it('without derive (the reminder pipeline\'s own ledger) counts only s and d records', () => {
    const table = new ReminderTable();
    const replay = createReminderReplay(table, false);
    const [a, b] = [makeVote(1), makeVote(2)];
    for (const record of [r(['on']), p(a), scheduledRecord(recordOfVote(b)!)]) replay(record);
    expect(keys(table)).toEqual([b.key]);
  });
});

const opened: FileVoteLedger[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((ledger) => ledger.close().catch(() => undefined)));
  await removeVoteDirs();
});

/** The rewards' ledger in `dir` with a fresh reminder store as its companion (or none), opened. */
async function open(dir: string, withReminders = true, more: { compactMinBytes?: number; compactRatio?: number } = {}) {
  const store = withReminders ? createLedgerReminderStore({ now: () => NOW, derive: true }) : undefined;
  const ledger = createFileVoteLedger({ directory: dir, now: () => NOW, ...more, ...(store ? { companion: store } : {}) });
  opened.push(ledger);
  await ledger.open();
  return { ledger, store: store as LedgerReminderStore };
}

const reminderLines = async (dir: string) => (await readFile(join(dir, 'votes.journal'), 'utf8')).split('\n').filter((line) => line.startsWith('["r"'));

describe('the schedule on the real file vote ledger, across reopenings', () => {
  it('writes nothing per vote scheduled: the votes\' records are the reminders; an expired arrival is one mark', async () => {
    const dir = await voteDir();
    const first = await open(dir);
    const expired = makeVote(9, -13 * HOUR);
    await first.ledger.recordPending([makeVote(1), makeVote(2, -10 * HOUR), expired]);
    await first.ledger.recordPending([makeVote(2), makeVote(3)]);
    expect(first.store.table.size).toBe(3);
    await first.ledger.close();
    expect(await reminderLines(dir)).toEqual(['["r","on"]', `["r","x",${JSON.stringify(expired.key)}]`]);

    const second = await open(dir);
    expect(keys(second.store.table)).toEqual([makeVote(1).key, makeVote(2).key, makeVote(3).key]);
    // The end of a reminder (sent or skipped) rides the same journal.
    await second.store.end([recordOfVote(makeVote(1))!]);
    await second.ledger.close();

    const third = await open(dir);
    expect(keys(third.store.table)).toEqual([makeVote(2).key, makeVote(3).key]);
  });

  it("times a vote by its key's ms, live and on replay alike, even where its createdAt says otherwise", async () => {
    // A vote fed through the public pipeline by hand: its key and its date disagree by a minute.
    // Its reminder and the end recorded for it must name the same vote at every opening, or an
    // end would not match on replay and the reminder would fire again.
    const odd = makeVote(21, 0, { createdAt: new Date(T0 + 60_000).toISOString() });
    const text = makeVote('voter-22', 0, { key: `voter-22:${T0 + 60_000}` });
    const dir = await voteDir();
    const first = await open(dir);
    await first.ledger.recordPending([odd, text]);
    const live = first.store.table.records().sort((a, b) => a.userId.localeCompare(b.userId));
    // The numeric voter by its key; a voter whose ID is text by its createdAt (its key is not read).
    expect(live.map((record) => [record.userId, record.createdMs])).toEqual([
      ['21', T0],
      ['voter-22', T0],
    ]);
    expect(reminderVote(live[0]!).key).toBe(`reminder:${odd.key}`);
    await first.ledger.close();
    const second = await open(dir);
    expect(second.store.table.records().sort((a, b) => a.userId.localeCompare(b.userId))).toEqual(live);
    await second.store.end([live[0]!]);
    await second.ledger.close();
    const third = await open(dir);
    expect(third.store.table.records().map((record) => record.userId)).toEqual(['voter-22']);
  });

  it('keeps the schedule through a compaction, and not past an opening without reminders', async () => {
    const dir = await voteDir();
    const first = await open(dir, true, { compactMinBytes: 0, compactRatio: 0 });
    await first.ledger.recordPending([makeVote(1), makeVote(2)]);
    await first.ledger.compact(NOW);
    expect(first.ledger.stats().rewrites).toBeGreaterThan(0);
    await first.ledger.recordPending([makeVote(3)]);
    await first.ledger.close();
    const second = await open(dir);
    expect(keys(second.store.table)).toEqual([makeVote(1).key, makeVote(2).key, makeVote(3).key]);
    await second.ledger.close();

    // Reminders turned off for a run: its votes get none, and the older schedule is void.
    const off = await open(dir, false);
    await off.ledger.recordPending([makeVote(4)]);
    await off.ledger.close();
    const back = await open(dir);
    expect(back.store.table.size).toBe(0);
    await back.ledger.recordPending([makeVote(5)]);
    expect(keys(back.store.table)).toEqual([makeVote(5).key]);
  });
});

describe('votes the ledger records, put in the table after its write is under way', () => {
  const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

  it('puts them in, in order, by the second turn or at once when the table is read; counted once at the commit', async () => {
    const store = createLedgerReminderStore({ now: () => NOW, derive: true });
    const counted: [number, number][] = [];
    store.watch?.((scheduled, replaced) => counted.push([scheduled, replaced]));
    // More than the arrivals' first 128 places; voter 7 votes again, later, in the same batch.
    const votes = [...Array.from({ length: 300 }, (_, i) => makeVote(i + 1, i * 1000)), makeVote(7, 400_000), makeVote(8, -HOUR)];
    for (const vote of votes) expect(store.recorded(vote)).toBeUndefined();
    await nextTurn();
    await nextTurn();
    const expected = new ReminderTable();
    for (const vote of votes) expected.add(vote, NOW);
    expect(store.table.list()).toEqual(expected.list());
    expect(store.table.size).toBe(300);
    store.committed();
    store.committed();
    expect(counted).toEqual([[300, 1]]);

    // Read at once, before any turn: in the table all the same.
    store.recorded(makeVote(1000, 5 * HOUR));
    expect(keys(store.table)).toContain(makeVote(1000, 5 * HOUR).key);
  });

  it('reads the clock once per turn: a vote recorded in a later turn is held against the clock of then', async () => {
    let clock = NOW;
    const store = createLedgerReminderStore({ now: () => clock, derive: true });
    const early = makeVote('early', -10.5 * HOUR); // expires half an hour after NOW
    expect(store.recorded(early)).toBeUndefined();
    clock = NOW + 2 * HOUR;
    // The same turn: the batch's clock (NOW) still holds, as when the ledger records them together.
    expect(store.recorded(makeVote('same turn', -10.5 * HOUR))).toBeUndefined();
    await nextTurn();
    const late = makeVote('late', -10.5 * HOUR);
    expect(store.recorded(late)).toEqual({ t: 'r', f: ['x', late.key] });
    expect(keys(store.table)).toEqual([early.key, makeVote('same turn', -10.5 * HOUR).key].sort());
  });
});
