import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { createFileVoteLedger, type FileVoteLedger } from '../../../src/votes/ledger-file.js';
import { KeyTable } from '../../../src/votes/ledger-keys.js';
import { HOUR, makeVote, removeVoteDirs, T0, voteDir } from './votes-fixtures.js';

/**
 * Keys of every form the table meets: packed ones (`<decimal user>:<decimal ms>`, at the edges of
 * what packs: 1 and 22 digits, ms of 1 and 15 digits) and those it must keep as text (a leading
 * zero, 23 digits, 16 digits of ms, a negative or fractional ms, `NaN`, no colon, letters).
 */
const packedKey = fc.tuple(fc.bigInt({ min: 0n, max: 10n ** 22n - 1n }), fc.integer({ min: 0, max: 999_999_999_999_999 })).map(([user, ms]) => `${user}:${ms}`);
const smallKey = fc.tuple(fc.integer({ min: 0, max: 30 }), fc.integer({ min: 0, max: 3 })).map(([user, ms]) => `${user}:${ms}`);
const textKey = fc.constantFrom(
  '0123:5',
  '1:05',
  `${'9'.repeat(23)}:1`,
  `1:${'9'.repeat(16)}`,
  '12:-5',
  '12:1.5',
  '12:NaN',
  '12',
  ':12',
  '12:',
  'abc:1',
  '1:2:3',
  'reminder:12:3',
  `${'9'.repeat(22)}:${'9'.repeat(15)}`,
  '0:0',
);
const key = fc.oneof(smallKey, smallKey, packedKey, textKey);
/** Expiries in minutes: mostly 32-bit integers, some not (kept as text then), `-0` among them. */
const minutes = fc.oneof(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), fc.integer({ min: 28_000_000, max: 28_001_000 }), fc.constantFrom(2 ** 31, -(2 ** 31) - 1, 1.5, Number.NaN, -0, 0));
type Operation = { op: 'set'; key: string; minutes: number } | { op: 'delete'; key: string } | { op: 'has'; key: string } | { op: 'prune'; keep: string[]; cutoff: number };
const operation: fc.Arbitrary<Operation> = fc.oneof(
  fc.record({ op: fc.constant('set' as const), key, minutes }),
  fc.record({ op: fc.constant('delete' as const), key }),
  fc.record({ op: fc.constant('has' as const), key }),
  fc.record({ op: fc.constant('prune' as const), keep: fc.array(key, { maxLength: 4 }), cutoff: fc.integer({ min: 28_000_000, max: 28_001_000 }) }),
);

/** -0 and 0 are one expiry to the ledger (`expires * MINUTE_MS + slack >= now`); the table keeps 0. */
const plain = (value: number | undefined) => (value === 0 ? 0 : value);
const sorted = (entries: Iterable<[string, number]>) => [...entries].map(([k, v]): [string, number] => [k, plain(v)!]).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
const chars = (model: Map<string, number>) => [...model.keys()].reduce((sum, k) => sum + k.length, 0);

/** Applies one operation to the table and to the model Map, checking that they answer alike. */
function step(table: KeyTable, model: Map<string, number>, o: Operation): void {
  if (o.op === 'set') {
    table.set(o.key, o.minutes);
    model.set(o.key, o.minutes);
  } else if (o.op === 'delete') expect(table.delete(o.key)).toBe(model.delete(o.key));
  else if (o.op === 'has') {
    expect(table.has(o.key)).toBe(model.has(o.key));
    expect(plain(table.get(o.key))).toEqual(plain(model.get(o.key)));
  } else {
    const fresh = (m: number) => m >= o.cutoff;
    let gone = 0;
    for (const [k, m] of model) {
      if (fresh(m) || o.keep.includes(k)) continue;
      model.delete(k);
      gone += 1;
    }
    expect(table.prune(fresh, o.keep)).toBe(gone);
  }
  expect(table.size).toBe(model.size);
}

describe('KeyTable (the ledger dedupe keys, packed)', () => {
  it('answers as a Map<string, number> does, through growth, deletions, prunes and keys of every form', () => {
    fc.assert(
      fc.property(fc.array(operation, { minLength: 1, maxLength: 400 }), (ops) => {
        const table = new KeyTable();
        const model = new Map<string, number>();
        for (const o of ops) step(table, model, o);
        expect(sorted(table.entries())).toEqual(sorted(model));
        expect(table.keyChars).toBe(chars(model));
      }),
      { numRuns: 200 },
    );
  });

  it('holds 100,000 vote keys in typed arrays, finds each again, and shrinks when they are pruned', () => {
    const table = new KeyTable();
    const keyOf = (n: number) => `${300_000_000_000_000 + n}:${T0 + n * 431}`;
    for (let n = 0; n < 100_000; n++) table.set(keyOf(n), 28_000_000 + (n % 720));
    expect(table.size).toBe(100_000);
    for (let n = 0; n < 100_000; n += 997) expect(table.get(keyOf(n))).toBe(28_000_000 + (n % 720));
    expect(table.has(keyOf(100_000))).toBe(false);
    expect(table.keyChars).toBe(100_000 * keyOf(0).length);
    // Every key but the two kept goes, and none is written out as a string to decide it.
    expect(table.prune(() => false, [keyOf(5), keyOf(99_999)])).toBe(99_998);
    expect(sorted(table.entries())).toEqual(sorted([[keyOf(5), 28_000_005], [keyOf(99_999), 28_000_000 + (99_999 % 720)]]));
    table.set(keyOf(7), 1);
    expect(table.size).toBe(3);
  });
});

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

  it('knows every key again after a replay and after a compaction snapshot, packed or kept as text, and forgets them when expired', async () => {
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
