import { afterEach, describe, expect, it } from 'vitest';
import { createFileVoteLedger, type FileVoteLedger } from '../../../src/votes/ledger-file.js';
import { HOUR, makeVote, removeVoteDirs, T0, voteDir } from './votes-fixtures.js';

describe('file ledger: dedupe keys across restarts', () => {
  const opened: FileVoteLedger[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((ledger) => ledger.close().catch(() => undefined)));
    await removeVoteDirs();
  });
  const open = async (directory: string, now = T0) => {
    const ledger = createFileVoteLedger({ directory, now: () => now, compactMinBytes: 0, compactRatio: 1 });
    opened.push(ledger);
    await ledger.open();
    return ledger;
  };

  it('knows every key again after a replay and after a compaction snapshot, of every form, and forgets them when expired', async () => {
    const directory = await voteDir();
    const odd = [makeVote('0042', 1), makeVote('user-a', 2), makeVote('1'.repeat(23), 3), makeVote(12, 4, { key: '12:NaN' })];
    const plain = Array.from({ length: 3_000 }, (_, i) => makeVote(`${300_000_000_000_000 + i}`, i * 7));
    const first = await open(directory);
    await first.recordPending([...odd, ...plain]);
    for (const vote of [...odd, ...plain]) await first.recordComplete(vote.key);
    await first.close();

    // Replayed from the journal's p and c lines: none fires again.
    const second = await open(directory);
    expect(second.stats().keys).toBe(3_004);
    expect(await second.recordPending([...odd, plain[0]!, plain[2_999]!])).toEqual([]);
    // A compaction writes the keys as k records of a snapshot; replayed, they are all known still.
    await second.compact(T0);
    expect(second.stats().rewrites).toBeGreaterThan(0);
    await second.close();
    const third = await open(directory);
    expect([...odd, ...plain].every((vote) => third.has(vote.key))).toBe(true);
    expect(await third.recordPending([...odd, ...plain.slice(0, 10)])).toEqual([]);
    await third.close();

    // Past their expiry plus keepKeysFor (1 h), the keys are forgotten: the same votes are new again.
    const fourth = await open(directory, T0 + 13 * HOUR + 3_000 * 7 + 120_000);
    expect(fourth.stats().keys).toBe(0);
    expect((await fourth.recordPending([odd[1]!, plain[0]!])).map((vote) => vote.key)).toEqual([odd[1]!.key, plain[0]!.key]);
  });
});
