import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { voteKey } from '../../../src/contract/vote.js';

/*
 * The vote key (decisions.md, "One vote, two roads"): `<user_id>:<created_at as epoch ms>`, one
 * template for both roads, whether the time comes as its ms or as a timestamp.
 */

const userId = fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map(String);
const ms = fc.integer({ min: 0, max: Date.UTC(9999, 11, 31) });

describe('voteKey', () => {
  it('is the user ID, a colon and the epoch ms, from the ms or from a timestamp of the same instant', () => {
    fc.assert(
      fc.property(userId, ms, (id, created) => {
        expect(voteKey(id, created)).toBe(`${id}:${created}`);
        expect(voteKey(id, new Date(created).toISOString())).toBe(`${id}:${created}`);
      }),
    );
    expect(voteKey('123', '2025-01-01T12:00:00+00:00')).toBe(`123:${Date.UTC(2025, 0, 1, 12)}`);
    expect(voteKey('alice', 0)).toBe('alice:0');
  });
});
