import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isKeyOfUser, lastVoteKeyInto, voteKey } from '../../../src/contract/vote-key.js';

/*
 * A vote key's parts, read once on the vote path and shared by the file vote ledger's dedupe keys
 * and the vote reminders riding it: they must be exactly the key's numbers for every key
 * `voteKey` makes of a numeric user ID, refuse every other key, and never answer for another key
 * than the one asked about (the memo).
 */

/** Canonical decimal IDs of 1 to 24 digits (no leading zero), as text. */
const numericId = fc.oneof(
  fc.bigInt({ min: 0n, max: 10n ** 18n }),
  fc.bigInt({ min: 0n, max: 10n ** 24n - 1n }),
).map(String);
const ms = fc.integer({ min: 0, max: 999_999_999_999_999 });

const parts = new Float64Array(3);
const read = (key: string): [string, number] | undefined => {
  parts.fill(Number.NaN);
  if (!lastVoteKeyInto(key, parts, 0)) return undefined;
  const [high, low, created] = parts as unknown as [number, number, number];
  return [(BigInt(high) * 1_000_000_000n + BigInt(low)).toString(), created];
};

describe('lastVoteKeyInto', () => {
  it("reads every key voteKey makes of a numeric user ID: the ID's two parts and the ms", () => {
    fc.assert(
      fc.property(numericId, ms, (id, created) => {
        expect(read(voteKey(id, created))).toEqual([id, created]);
        // The leading part holds all but the last 9 digits: at most 15, exact in a double.
        expect(parts[1]).toBeLessThan(1e9);
      }),
    );
  });

  it('refuses any other key, and leaves the output alone', () => {
    const refused = ['', ':', '1:', ':1', '01:5', '1:05', '1:2:3', 'a1:5', '1:5a', '1 :5', '-1:5', '1:-5', '1:1.5', '1:1e3', `${'1'.repeat(25)}:5`, `1:${'1'.repeat(16)}`, 'voter:1700000000000', '1:2025-01-01T00:00:00.000Z'];
    for (const key of refused) {
      const out = new Float64Array([7, 7, 7]);
      expect(lastVoteKeyInto(key, out, 0), key).toBe(false);
      expect([...out]).toEqual([7, 7, 7]);
    }
    // The limits themselves are read.
    expect(read(`${'9'.repeat(24)}:${'9'.repeat(15)}`)).toEqual(['9'.repeat(24), 999_999_999_999_999]);
    expect(read('0:0')).toEqual(['0', 0]);
  });

  it('answers for the key asked about, whatever it read before (the memo)', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.tuple(numericId, ms).map(([id, created]) => voteKey(id, created)), fc.string()), { minLength: 1, maxLength: 20 }), (keys) => {
        for (const key of [...keys, ...keys.reverse()]) {
          const colon = key.indexOf(':');
          const expected = /^(?:0|[1-9][0-9]{0,23}):(?:0|[1-9][0-9]{0,14})$/.test(key) ? [key.slice(0, colon), Number(key.slice(colon + 1))] : undefined;
          expect(read(key)).toEqual(expected);
        }
      }),
    );
  });

  it('writes at the offset it is given', () => {
    const out = new Float64Array(7);
    expect(lastVoteKeyInto('1234567890123:42', out, 4)).toBe(true);
    expect([...out]).toEqual([0, 0, 0, 0, 1234, 567_890_123, 42]);
  });
});

describe('isKeyOfUser', () => {
  it("says whether a key is its user's: the user's ID, a colon, something after it", () => {
    expect(isKeyOfUser('123:456', '123')).toBe(true);
    expect(isKeyOfUser('alice:1', 'alice')).toBe(true);
    expect(isKeyOfUser('123:456', '12')).toBe(false);
    expect(isKeyOfUser('123:456', '1234')).toBe(false);
    expect(isKeyOfUser('123:', '123')).toBe(false);
    expect(isKeyOfUser('124:456', '123')).toBe(false);
    expect(isKeyOfUser('x123:456', '123')).toBe(false);
  });

  it('answers for the pair asked about, whatever it was asked before (the memo)', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.string({ maxLength: 6 }), fc.string({ maxLength: 10 })), { minLength: 1, maxLength: 20 }), (pairs) => {
        for (const [user, rest] of [...pairs, ...pairs.reverse()]) {
          for (const key of [`${user}:${rest}`, `${rest}:${user}`, rest]) expect(isKeyOfUser(key, user)).toBe(key.startsWith(`${user}:`) && key.length > user.length + 1);
        }
      }),
    );
  });
});
