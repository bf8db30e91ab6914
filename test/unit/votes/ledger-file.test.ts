import { appendFile, cp, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { StoreError } from '../../../src/store/errors.js';
import type { FileStoreHandle } from '../../../src/store/fs.js';
import { nodeJournalFs, type JournalFs } from '../../../src/votes/journal.js';
import { createFileVoteLedger, type FileVoteLedger, type FileVoteLedgerOptions } from '../../../src/votes/ledger-file.js';
import type { Vote } from '../../../src/votes/types.js';
import { describeLedgerContract } from './ledger-contract.js';
import { HOUR, makeLetter, makeVote, removeVoteDirs, T0, voteDir } from './votes-fixtures.js';

const opened: FileVoteLedger[] = [];

/** A file ledger that the test's cleanup closes even when the test fails. */
function fileLedger(options: FileVoteLedgerOptions): FileVoteLedger {
  const ledger = createFileVoteLedger({ now: () => T0, ...options });
  opened.push(ledger);
  return ledger;
}

afterEach(async () => {
  await Promise.all(opened.splice(0).map((ledger) => ledger.close().catch(() => undefined)));
  await removeVoteDirs();
});

/** A line's record kind: `t` of an object line, the first item of an array line (version 2). */
const kindOf = (line: string): string => {
  if (line === '') return '';
  const value = JSON.parse(line) as { t: string } | [string];
  return Array.isArray(value) ? value[0] : value.t;
};
/** Resolves once `check()` holds (polled every 5 ms; fails the test after 5 s). */
async function until(check: () => boolean): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('the condition did not hold within 5 s');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
const journalLines = async (dir: string) => (await readFile(join(dir, 'votes.journal'), 'utf8')).split('\n');

/** The real file system, counting the journal's fsyncs; `failNextWrite` makes one append fail halfway. */
function countingFs() {
  const counts = { datasyncs: 0, failNextWrite: false };
  const fs: JournalFs = {
    ...nodeJournalFs,
    async open(path, flags, mode) {
      const handle = await nodeJournalFs.open(path, flags, mode);
      if (!path.endsWith('votes.journal')) return handle;
      const wrapped: FileStoreHandle = {
        async writeFile(data) {
          if (counts.failNextWrite) {
            counts.failNextWrite = false;
            await handle.writeFile(data.slice(0, Math.floor(data.length / 2)));
            throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
          }
          await handle.writeFile(data);
        },
        async datasync() {
          counts.datasyncs += 1;
          await handle.datasync();
        },
        sync: () => handle.sync(),
        close: () => handle.close(),
      };
      return wrapped;
    },
  };
  return { fs, counts };
}

describeLedgerContract('file', async ({ keepKeysForMs }) => {
  const directory = await voteDir();
  let current = fileLedger({ directory, keepKeysForMs });
  return {
    ledger: current,
    async reopen() {
      await current.close();
      current = fileLedger({ directory, keepKeysForMs });
      return current;
    },
  };
});

describe('file ledger: the journal', () => {
  it('is JSON lines after a header, in the state directory (created if missing), replayed by a new instance', async () => {
    const dir = join(await voteDir(), 'nested', 'state');
    const first = fileLedger({ directory: dir });
    await first.open();
    const vote = makeVote(1);
    await first.recordPending([vote]);
    await first.recordHookDone(vote.key, 'exec');
    await first.recordComplete(vote.key);
    await first.close();
    const lines = await journalLines(dir);
    expect(lines.map(kindOf)).toEqual(['journal', 'p', 'h', 'c', '']);
    expect(((await stat(join(dir, 'votes.journal'))).mode & 0o777).toString(8)).toBe('600');

    const second = fileLedger({ directory: dir });
    expect(await second.open()).toEqual([]);
    expect(second.has(vote.key)).toBe(true);
    expect(second.warnings()).toEqual([]);
    expect(second.describe()).toBe(`file ${join(dir, 'votes.journal')}`);
  });

  it('drops a torn last line (a crash mid-write) and truncates it, keeping every whole record', async () => {
    const dir = await voteDir();
    const first = fileLedger({ directory: dir });
    await first.open();
    await first.recordPending([makeVote(1), makeVote(2)]);
    await first.close();
    const size = (await stat(join(dir, 'votes.journal'))).size;
    const torn = '{"t":"p","v":{"key":"3:17145';
    await appendFile(join(dir, 'votes.journal'), torn);

    const second = fileLedger({ directory: dir });
    expect((await second.open()).map((entry) => entry.vote.userId)).toEqual(['1', '2']);
    expect(second.warnings()).toEqual([expect.stringContaining(`dropped its ${torn.length} bytes`)]);
    expect((await stat(join(dir, 'votes.journal'))).size).toBe(size);
    await second.recordPending([makeVote(3)]);
    await second.close();

    const third = fileLedger({ directory: dir });
    expect((await third.open()).map((entry) => entry.vote.userId)).toEqual(['1', '2', '3']);
    expect(third.warnings()).toEqual([]);
  });

  it('skips a corrupt line inside with a warning, keeps the records around it, and sets the damaged journal aside', async () => {
    const dir = await voteDir();
    const first = fileLedger({ directory: dir });
    await first.open();
    const [a, b] = [makeVote(1), makeVote(2)];
    await first.recordPending([a]);
    await first.close();
    const damage = '\u0000\u0000garbage{\n{"t":"p","v":{"key":"x"}}\n';
    const after = `${JSON.stringify({ t: 'p', v: b })}\n${JSON.stringify({ t: 'h', k: a.key, h: 'exec' })}\n`;
    await appendFile(join(dir, 'votes.journal'), damage + after);
    const damaged = await readFile(join(dir, 'votes.journal'), 'utf8');

    const third = fileLedger({ directory: dir });
    const pending = await third.open();
    expect(pending.map((entry) => [entry.vote.key, entry.done])).toEqual([
      [a.key, ['exec']],
      [b.key, []],
    ]);
    expect(third.warnings()).toEqual([expect.stringMatching(/2 unreadable line\(s\) \(line 3, 4\).*kept its 3 readable records.*votes\.journal\.corrupt-/)]);
    const aside = (await readdir(dir)).filter((name) => name.startsWith('votes.journal.corrupt-'));
    expect(aside).toHaveLength(1);
    expect(await readFile(join(dir, aside[0]!), 'utf8')).toBe(damaged);
    await third.close();

    const fourth = fileLedger({ directory: dir });
    expect(await fourth.open()).toEqual(pending);
    expect(fourth.warnings()).toEqual([]);
  });

  it('keeps the records of a journal whose header line was lost, and writes the header back', async () => {
    const dir = await voteDir();
    const vote = makeVote(1);
    await writeFile(join(dir, 'votes.journal'), `${JSON.stringify({ t: 'p', v: vote })}\n\n`);
    const ledger = fileLedger({ directory: dir });
    expect((await ledger.open()).map((entry) => entry.vote)).toEqual([vote]);
    expect(ledger.warnings()).toEqual([expect.stringMatching(/had no header line: kept its 1 readable records and rewrote it/)]);
    expect(JSON.parse((await journalLines(dir))[0]!)).toMatchObject({ t: 'journal', version: 1 });
  });

  it('replays a version 2 journal (array lines) and rewrites it under the version 1 header before appending, set aside when it held reminders', async () => {
    const dir = await voteDir();
    const [a, b, c] = [makeVote(1), { ...makeVote(2), road: 'webhook' as const, voteId: 'v2', user: { name: 'B "b"', avatarUrl: null } }, makeVote(3)];
    const arrayLine = (v: Vote) => ['p', Number(v.key.split(':')[1]), v.userId, v.platformId, v.projectId, v.weight, v.createdAt, v.expiresAt, v.road === 'webhook' ? 1 : 0, ...(v.user ? [v.voteId, v.user.name, v.user.avatarUrl] : [])];
    const v2 = [
      { t: 'journal', format: 'listing-agent votes', version: 2 },
      ['r', 'on'],
      arrayLine(a),
      arrayLine(b),
      arrayLine(c),
      ['h', b.key, 'exec'],
      ['c', c.key],
      ['r', 'd', c.projectId, c.userId, Date.parse(c.createdAt)],
    ];
    const text = v2.map((record) => `${JSON.stringify(record)}\n`).join('');
    await writeFile(join(dir, 'votes.journal'), text);
    const first = fileLedger({ directory: dir });
    const pending = await first.open();
    expect(pending.map((entry) => [entry.vote, entry.done])).toEqual([
      [a, []],
      [b, ['exec']],
    ]);
    expect(first.has(c.key)).toBe(true);
    expect(first.warnings()).toEqual([]);
    const rewritten = (await journalLines(dir)).filter((line) => line !== '');
    expect(JSON.parse(rewritten[0]!)).toEqual({ t: 'journal', format: 'listing-agent votes', version: 1 });
    expect(rewritten.every((line) => line.startsWith('{"t":'))).toBe(true);
    // The journal as version 2 left it, for the reminders' records it held.
    expect(await readFile(join(dir, 'votes.journal.v2'), 'utf8')).toBe(text);
    const d = makeVote(4);
    await first.recordPending([d]);
    await first.close();

    const second = fileLedger({ directory: dir });
    expect((await second.open()).map((entry) => entry.vote)).toEqual([a, b, d]);
    expect(second.has(c.key)).toBe(true);
    expect(JSON.parse((await journalLines(dir)).at(-2)!)).toEqual({ t: 'p', v: d });
  });

  it('never appends to a version 2 journal: a failed rewrite is tried again at the next commit', async () => {
    const dir = await voteDir();
    const a = makeVote(1);
    const v2 = [{ t: 'journal', format: 'listing-agent votes', version: 2 }, { t: 'p', v: a }];
    await writeFile(join(dir, 'votes.journal'), v2.map((record) => `${JSON.stringify(record)}\n`).join(''));
    let failRewrites = 2; // the rewrite at open, then the first commit's
    const fs: JournalFs = {
      ...nodeJournalFs,
      async open(path, flags, mode) {
        if (flags === 'wx' && failRewrites > 0) {
          failRewrites -= 1;
          throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
        }
        return nodeJournalFs.open(path, flags, mode);
      },
    };
    const ledger = fileLedger({ directory: dir, fs, probeDelays: { firstMs: 1, maxMs: 5 } });
    expect((await ledger.open()).map((entry) => entry.vote)).toEqual([a]);
    await expect(ledger.recordPending([makeVote(2)])).rejects.toThrow(StoreError);
    expect((await journalLines(dir)).filter((line) => line !== '')).toHaveLength(2);

    // The failed write made the directory unwritable; its probe (a rewrite, no append) says when it is not any more.
    await until(() => ledger.writeHealth.writable);
    const e = makeVote(3);
    await ledger.recordPending([e]);
    const lines = (await journalLines(dir)).filter((line) => line !== '');
    expect(JSON.parse(lines[0]!)).toMatchObject({ t: 'journal', version: 1 });
    await ledger.close();
    const again = fileLedger({ directory: dir });
    expect((await again.open()).map((entry) => entry.vote.key)).toEqual(expect.arrayContaining([a.key, e.key]));
  });

  it('keeps what was recorded, not the vote object: a caller changing the vote later changes nothing', async () => {
    const dir = await voteDir();
    const ledger = fileLedger({ directory: dir });
    await ledger.open();
    const vote = makeVote(1);
    const recorded = { ...vote };
    await ledger.recordPending([vote]);
    vote.weight = 99;
    vote.userId = 'someone else';
    await ledger.close();
    const again = fileLedger({ directory: dir });
    expect((await again.open()).map((entry) => entry.vote)).toEqual([recorded]);
  });

  it('refuses a journal written by a newer version, and leaves it alone', async () => {
    const dir = await voteDir();
    const text = '{"t":"journal","format":"listing-agent votes","version":3}\n{"t":"q"}\n';
    await writeFile(join(dir, 'votes.journal'), text);
    const ledger = fileLedger({ directory: dir });
    const error = await ledger.open().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(StoreError);
    expect((error as Error).message).toMatch(/newer listing-agent \(journal version 3\); upgrade/);
    expect(await readFile(join(dir, 'votes.journal'), 'utf8')).toBe(text);
  });

  it('removes the temporary files of a compaction that died, and refuses a second ledger on one directory in-process', async () => {
    const dir = await voteDir();
    await writeFile(join(dir, 'votes.journal.tmp-abc123'), 'half a snapshot');
    const ledger = fileLedger({ directory: dir });
    await ledger.open();
    expect(await readdir(dir)).toEqual(['votes.journal', 'votes.journal.reserve']);
    await expect(fileLedger({ directory: dir }).open()).rejects.toThrow(/already open in this process/);
    await ledger.close();
    await fileLedger({ directory: dir }).open(); // free again once closed
  });
});

describe('file ledger: writes', () => {
  it('group-commits: 100 concurrent recordPending calls cost a few fsyncs, not 100', async () => {
    const { fs, counts } = countingFs();
    const ledger = fileLedger({ directory: await voteDir(), fs });
    await ledger.open();
    const before = counts.datasyncs;
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => ledger.recordPending([makeVote(i)])));
    expect(results.flat()).toHaveLength(100);
    expect(counts.datasyncs - before).toBeLessThanOrEqual(3);
    // Hook records arriving while a write runs share the next one.
    const done = Promise.all(results.flat().map((vote) => ledger.recordHookDone(vote.key, 'exec')));
    const complete = Promise.all(results.flat().map((vote) => ledger.recordComplete(vote.key)));
    await Promise.all([done, complete]);
    expect(counts.datasyncs - before).toBeLessThanOrEqual(6);
    expect(ledger.stats()).toMatchObject({ keys: 100, pending: 0 });
  });

  it('a failed append rejects its callers, cuts the partial write off, and the next commit writes the records', async () => {
    const { fs, counts } = countingFs();
    const dir = await voteDir();
    // No reserve: with one, the append would be retried at once in the room it frees.
    const ledger = fileLedger({ directory: dir, fs, reserveBytes: 0, probeDelays: { firstMs: 1, maxMs: 5 } });
    await ledger.open();
    counts.failNextWrite = true;
    const error = await ledger.recordPending([makeVote(1), makeVote(2)]).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(StoreError);
    expect((error as Error).message).toMatch(/no space left on device/);
    expect(ledger.stats().failedCommits).toBe(1);
    // New votes wait for the probe, which writes the records kept in memory.
    await until(() => ledger.writeHealth.writable);
    // A retry of the same batch is answered from a write that included it.
    expect(await ledger.recordPending([makeVote(1), makeVote(3)])).toEqual([makeVote(3)]);
    await ledger.close();
    const again = fileLedger({ directory: dir });
    expect((await again.open()).map((entry) => entry.vote.userId)).toEqual(['1', '2', '3']);
    expect(again.warnings()).toEqual([]);
  });

  it('is durable when a method resolves: a ledger on a copy of the directory, taken while the first is open, sees every record', async () => {
    const dir = await voteDir();
    const first = fileLedger({ directory: join(dir, 'live') });
    await first.open();
    const votes = Array.from({ length: 50 }, (_, i) => makeVote(i));
    await Promise.all(votes.map((vote) => first.recordPending([vote])));
    await Promise.all(votes.slice(0, 20).map((vote) => first.recordHookDone(vote.key, 'exec')));
    await Promise.all(votes.slice(0, 10).map((vote) => first.recordComplete(vote.key)));
    await first.recordDeadLetter(makeLetter(votes[15]!, 'http'));
    await cp(join(dir, 'live'), join(dir, 'copy'), { recursive: true });

    const second = fileLedger({ directory: join(dir, 'copy') });
    const pending = await second.open();
    expect(pending).toHaveLength(40);
    expect(pending.filter((entry) => entry.done.includes('exec'))).toHaveLength(10);
    expect(pending.find((entry) => entry.vote.key === votes[15]!.key)?.deadLettered).toEqual(['http']);
    expect(votes.every((vote) => second.has(vote.key))).toBe(true);
    expect(await second.deadLetters()).toEqual([makeLetter(votes[15]!, 'http')]);
  });
});

describe('file ledger: compaction', () => {
  it('forgets expired keys and rewrites the journal as a small snapshot, which replays to the same state', async () => {
    const dir = await voteDir();
    const ledger = fileLedger({ directory: dir, compactMinBytes: 64 * 1024, compactRatio: 3 });
    await ledger.open();
    const votes = Array.from({ length: 2_000 }, (_, i) => makeVote(i, i * 1000));
    await ledger.recordPending(votes);
    await Promise.all(votes.map((vote) => ledger.recordHookDone(vote.key, 'exec')));
    await Promise.all(votes.slice(0, 1_990).map((vote) => ledger.recordComplete(vote.key)));
    await ledger.recordDeadLetter(makeLetter(votes[1_995]!, 'http'));
    const grown = ledger.stats().bytes;
    expect(grown).toBeGreaterThan(300_000);

    // Nothing expired yet, but the journal holds each vote whole plus two records, a snapshot only
    // the finished keys: more than 3x smaller (the ratio set above), so it is rewritten.
    await ledger.compact(T0);
    const snapshot = ledger.stats();
    expect(snapshot).toMatchObject({ keys: 2_000, pending: 10, deadLetters: 1, rewrites: 1 });
    expect(snapshot.bytes).toBeLessThan(grown / 3);

    await ledger.compact(T0 + 12 * HOUR + HOUR + 2_100_000); // expiries count in whole minutes, rounded up
    const after = ledger.stats();
    expect(after).toMatchObject({ keys: 10, pending: 10, deadLetters: 1 });
    expect(after.bytes).toBeLessThan(10_000);
    expect((await stat(join(dir, 'votes.journal'))).size).toBe(after.bytes);
    // Appends after a rewrite go to the new journal.
    await ledger.recordComplete(votes[1_999]!.key);
    await ledger.close();

    const again = fileLedger({ directory: dir });
    const pending = await again.open();
    expect(pending.map((entry) => entry.vote.key)).toEqual(votes.slice(1_990, 1_999).map((vote) => vote.key));
    expect(pending.every((entry) => entry.done.includes('exec'))).toBe(true);
    expect(await again.deadLetters()).toEqual([makeLetter(votes[1_995]!, 'http')]);
    expect(again.has(votes[1_999]!.key) && !again.has(votes[0]!.key)).toBe(true);
    expect(await readdir(dir)).toEqual(['votes.journal', 'votes.journal.reserve']);
  });

  it('leaves a small journal alone, and compacts on open', async () => {
    const dir = await voteDir();
    let now = T0;
    const ledger = fileLedger({ directory: dir, now: () => now });
    await ledger.open();
    const vote = makeVote(1);
    await ledger.recordPending([vote]);
    await ledger.recordComplete(vote.key);
    await ledger.compact(T0 + 100 * HOUR);
    expect(ledger.stats()).toMatchObject({ keys: 0, rewrites: 0 });
    await ledger.close();

    now = T0 + 100 * HOUR;
    const again = fileLedger({ directory: dir, now: () => now, compactMinBytes: 1 });
    await again.open();
    expect(again.has(vote.key)).toBe(false);
    expect(again.stats()).toMatchObject({ keys: 0, rewrites: 1 });
    expect(await journalLines(dir)).toHaveLength(2); // the header and the final newline
  });
});
