import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { StoreError } from '../../../src/store/errors.js';
import { createFileVoteLedger, type FileVoteLedger, type FileVoteLedgerOptions } from '../../../src/votes/ledger-file.js';
import { DEFAULT_RESERVE_BYTES, LedgerCloseError } from '../../../src/votes/ledger-file-space.js';
import { fakeDisk } from '../../helpers/fake-disk.js';
import { makeVote, removeVoteDirs, T0, voteDir } from '../../unit/votes/votes-fixtures.js';

/**
 * The file vote ledger on a disk that fills up and is made read-only (the fake disk of
 * test/helpers/fake-disk.ts: real files, a byte budget, EROFS on demand). The promise kept: a vote
 * whose hooks succeeded before or while the disk is full gets its completion record on disk (the
 * reserve's room), so a stop and a start do not run its hooks again; new votes are refused while
 * the disk cannot take them; the ledger becomes writable by itself once it can.
 */

const opened: FileVoteLedger[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((ledger) => ledger.close().catch(() => undefined)));
  await removeVoteDirs();
});

const FAST_PROBE = { firstMs: 5, maxMs: 20 };

function ledgerOn(options: FileVoteLedgerOptions): FileVoteLedger {
  const ledger = createFileVoteLedger({ now: () => T0, probeDelays: FAST_PROBE, ...options });
  opened.push(ledger);
  return ledger;
}

async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not within 5 s: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const votes = (from: number, count: number) => Array.from({ length: count }, (_, i) => makeVote(from + i));

describe('the file vote ledger on a full disk', () => {
  it('writes the completion records of acknowledged votes into its reserve, refuses new votes, and a restart runs nothing again', async () => {
    const disk = fakeDisk();
    const directory = await voteDir();
    const ledger = ledgerOn({ directory, fs: disk.fs });
    await ledger.open();
    expect((await stat(join(directory, 'votes.journal.reserve'))).size).toBe(DEFAULT_RESERVE_BYTES);
    const acknowledged = votes(1, 40);
    await ledger.recordPending(acknowledged);

    disk.fill();
    // The hooks of every acknowledged vote succeed now: their records go into the reserve's room.
    await Promise.all(acknowledged.map((vote) => ledger.recordComplete(vote.key)));
    expect(disk.failures.ENOSPC).toBeGreaterThan(0);
    expect((await stat(join(directory, 'votes.journal.reserve'))).size).toBe(0);
    expect(ledger.writeHealth.state()).toMatchObject({ writable: false, problem: 'no_space', reason: `no space left on the device holding ${directory}` });

    // A new vote is refused before it touches memory; a known one is still answered.
    const refused = await ledger.recordPending([makeVote(100)]).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(StoreError);
    expect((refused as Error).message).toBe(`cannot record new votes in ${join(directory, 'votes.journal')}: no space left on the device holding ${directory}; they are refused until a write there succeeds again`);
    expect(ledger.has(makeVote(100).key)).toBe(false);
    expect(await ledger.recordPending([acknowledged[0]!])).toEqual([]);

    // A clean stop on the full disk, then a start: nothing pending, nothing to run again.
    await ledger.close();
    const again = ledgerOn({ directory, fs: disk.fs });
    expect(await again.open()).toEqual([]);
  });

  it('is writable again by itself once there is room: the probe takes the reserve back, and new votes are recorded', async () => {
    const disk = fakeDisk();
    const directory = await voteDir();
    const ledger = ledgerOn({ directory, fs: disk.fs });
    await ledger.open();
    await ledger.recordPending(votes(1, 5));
    disk.fill();
    await ledger.recordComplete(makeVote(1).key);
    expect(ledger.writeHealth.writable).toBe(false);
    // Probes fail while the disk is full (no room for the reserve), with no traffic at all.
    const failuresBefore = disk.failures.ENOSPC;
    await until(() => disk.failures.ENOSPC >= failuresBefore + 2, 'two probes fail');
    expect(ledger.writeHealth.writable).toBe(false);

    disk.free();
    await until(() => ledger.writeHealth.writable, 'writable again');
    expect((await stat(join(directory, 'votes.journal.reserve'))).size).toBe(DEFAULT_RESERVE_BYTES);
    expect(await ledger.recordPending([makeVote(100)])).toEqual([makeVote(100)]);
  });

  it('with no reserve left, says at close which votes are rewarded again, and why', async () => {
    const disk = fakeDisk();
    const directory = await voteDir();
    const ledger = ledgerOn({ directory, fs: disk.fs, reserveBytes: 0 });
    await ledger.open();
    const [a, b, c] = votes(1, 3);
    await ledger.recordPending([a!, b!, c!]);
    disk.fill();
    await expect(ledger.recordComplete(a!.key)).rejects.toThrow(/no space left on device/);
    await expect(ledger.recordHookDone(b!.key, 'shop')).rejects.toThrow(StoreError);
    const error = await ledger.close().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(LedgerCloseError);
    expect((error as LedgerCloseError).rewardedAgain).toEqual([a!.key, b!.key]);
    expect((error as Error).message).toContain(`no space left on the device holding ${directory}; 2 vote(s) whose hooks succeeded (or gave up) are not recorded as done, so their hooks run again at the next start: ${a!.key}, ${b!.key}`);
    disk.free();
    const again = ledgerOn({ directory, fs: disk.fs });
    expect((await again.open()).map((entry) => entry.vote.key)).toEqual([a!.key, b!.key, c!.key]);
  });
});

describe('the file vote ledger on a read-only file system', () => {
  it('refuses new votes, keeps the records of finished ones in memory, and writes them once it can write again', async () => {
    const disk = fakeDisk();
    const directory = await voteDir();
    const ledger = ledgerOn({ directory, fs: disk.fs });
    await ledger.open();
    const [a, b] = votes(1, 2);
    await ledger.recordPending([a!, b!]);
    disk.readOnly = true;
    await expect(ledger.recordComplete(a!.key)).rejects.toThrow(/read-only file system/);
    expect(ledger.writeHealth.state()).toMatchObject({ writable: false, problem: 'read_only', reason: `the state directory ${directory} is read-only: nothing can be written there` });
    await expect(ledger.recordPending([makeVote(100)])).rejects.toThrow(/is read-only: nothing can be written there; they are refused/);
    // The reserve does not help here: it is still held, for a full disk later.
    expect((await stat(join(directory, 'votes.journal.reserve'))).size).toBe(DEFAULT_RESERVE_BYTES);

    disk.readOnly = false;
    await until(() => ledger.writeHealth.writable, 'writable again');
    expect(await readFile(join(directory, 'votes.journal'), 'utf8')).toContain(JSON.stringify({ t: 'c', k: a!.key }));
    await ledger.close();
    const again = ledgerOn({ directory, fs: disk.fs });
    expect((await again.open()).map((entry) => entry.vote.key)).toEqual([b!.key]);
  });

  it('a stop while read-only says so, and names the votes rewarded again', async () => {
    const disk = fakeDisk();
    const directory = await voteDir();
    const ledger = ledgerOn({ directory, fs: disk.fs });
    await ledger.open();
    const [a] = votes(1, 1);
    await ledger.recordPending([a!]);
    disk.readOnly = true;
    await ledger.recordComplete(a!.key).catch(() => undefined);
    const error = await ledger.close().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(LedgerCloseError);
    expect((error as Error).message).toContain(`is read-only: nothing can be written there; 1 vote(s) whose hooks succeeded (or gave up) are not recorded as done, so their hooks run again at the next start: ${a!.key}`);
  });
});
