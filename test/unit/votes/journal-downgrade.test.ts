import { cp, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createFileVoteLedger, type FileVoteLedger } from '../../../src/public/votes.js';
import { parseRecord as parseV010, readHeader as headerV010 } from '../../helpers/journal-v010.js';
import { makeLetter, makeVote, removeVoteDirs, T0, voteDir } from './votes-fixtures.js';

/*
 * Back to 0.1.0 on the same state directory: every vote journal this version writes is one that
 * 0.1.0's reader (test/helpers/journal-v010.ts, its code as it was) reads whole: a header of its
 * own version and no line it would skip as damage, each line the same record to it as to this
 * version. So a bot can go back to 0.1.0 and keep its pending votes, dead letters and keys.
 * (Checked once against 0.1.0 itself, built from commit 80c5d81^: the same pending votes, dead
 * letters and keys, no warning, for each journal below.)
 */

const opened: FileVoteLedger[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((ledger) => ledger.close().catch(() => undefined)));
  await removeVoteDirs();
});

/** The journal's lines, each as 0.1.0 reads it. */
async function readBy010(directory: string) {
  const lines = (await readFile(join(directory, 'votes.journal'), 'utf8')).split('\n').filter((line) => line !== '');
  expect(headerV010(lines[0]!)).toEqual({ kind: 'ours' });
  return lines.slice(1).map((line) => ({ line, record: parseV010(line) }));
}

/** Every line of the journal in `directory` read by 0.1.0 as the record this version wrote. */
async function expectReadableBy010(directory: string) {
  const read = await readBy010(directory);
  expect(read.filter(({ record }) => record === undefined).map(({ line }) => line)).toEqual([]);
  for (const { line, record } of read) expect(record).toEqual(JSON.parse(line));
  return read.map(({ record }) => record!.t);
}

async function open(directory: string, options: { compactMinBytes?: number; compactRatio?: number } = {}) {
  const ledger = createFileVoteLedger({ directory, now: () => T0, ...options });
  opened.push(ledger);
  await ledger.open();
  return ledger;
}

describe('a vote journal written by this version, read by 0.1.0', () => {
  it('as appended: pending votes of both roads, hook results, finished votes, dead letters and their replay', async () => {
    const directory = await voteDir();
    const ledger = await open(directory);
    const polled = makeVote(1);
    const delivered = { ...makeVote(2), road: 'webhook' as const, voteId: 'v-2', user: { name: 'Zoë "2"', avatarUrl: null } };
    const [lettered, replayed] = [makeVote(3), makeVote(4)];
    await ledger.recordPending([polled, delivered, lettered, replayed]);
    await ledger.recordHookDone(polled.key, 'grant');
    await ledger.recordComplete(polled.key);
    await ledger.recordDeadLetter(makeLetter(lettered, 'announce'));
    await ledger.recordComplete(lettered.key);
    await ledger.recordDeadLetter(makeLetter(replayed, 'announce'));
    await ledger.takeDeadLetters({ keys: [replayed.key] });
    await ledger.close();
    expect(await expectReadableBy010(directory)).toEqual(['p', 'p', 'p', 'p', 'h', 'c', 'd', 'c', 'd', 'x']);
  });

  it('as a compaction rewrites it: kept keys, votes still pending or dead-lettered, the dead letters', async () => {
    const directory = await voteDir();
    const ledger = await open(directory, { compactMinBytes: 0, compactRatio: 0 });
    const [done, pending, lettered] = [makeVote(1), makeVote(2), makeVote(3)];
    await ledger.recordPending([done, pending, lettered]);
    await ledger.recordComplete(done.key);
    await ledger.recordDeadLetter(makeLetter(lettered, 'announce'));
    await ledger.recordComplete(lettered.key);
    await ledger.compact(T0);
    expect(ledger.stats().rewrites).toBeGreaterThan(0);
    await ledger.close();
    expect(await expectReadableBy010(directory)).toEqual(['k', 'e', 'e', 'd']);
  });

  it('once this version opened a journal of the version between (format 2, with the vote reminders in it)', async () => {
    const directory = join(await voteDir(), 'state');
    await cp(fileURLToPath(new URL('../../fixtures/journals/main/', import.meta.url)), directory, { recursive: true });
    const ledger = await open(directory);
    await ledger.recordPending([makeVote(9)]);
    await ledger.close();
    const kinds = await expectReadableBy010(directory);
    expect(kinds.at(-1)).toBe('p');
    expect(kinds).not.toContain('r');
  });
});
