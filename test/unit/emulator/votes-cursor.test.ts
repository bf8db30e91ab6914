import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { encodeVotesCursor, readVotesCursor, type VotesCursor } from '../../../src/emulator/votes-cursor.js';

const KEY = 'test-signing-key';
const CURSOR: VotesCursor = { projectId: '1000000000000000010', createdAt: 1_736_000_000_123, seq: 42, issuedAt: 1_736_000_100_000 };
const EXPECT = { projectId: CURSOR.projectId, now: CURSOR.issuedAt, ttlSeconds: null };

/** The same string with the character at `index` swapped for another base64url character. */
function flip(token: string, index: number): string {
  const c = token[index]!;
  return `${token.slice(0, index)}${c === 'A' ? 'B' : 'A'}${token.slice(index + 1)}`;
}

describe('votes cursor', () => {
  it('round-trips through an opaque base64url string', () => {
    const token = encodeVotesCursor(KEY, CURSOR);
    expect(token).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(token).not.toContain(CURSOR.projectId);
    expect(readVotesCursor(KEY, token, EXPECT)).toEqual({ ok: true, cursor: CURSOR });
  });

  it('keeps negative and zero positions', () => {
    const early = { ...CURSOR, createdAt: -86_400_000, seq: 0 };
    expect(readVotesCursor(KEY, encodeVotesCursor(KEY, early), EXPECT)).toEqual({ ok: true, cursor: early });
  });

  it('refuses numbers that are not safe integers when encoding', () => {
    expect(() => encodeVotesCursor(KEY, { ...CURSOR, createdAt: 1.5 })).toThrow(RangeError);
    expect(() => encodeVotesCursor(KEY, { ...CURSOR, seq: Number.NaN })).toThrow(RangeError);
  });

  it('refuses a cursor signed with another key', () => {
    const token = encodeVotesCursor('another-key', CURSOR);
    expect(readVotesCursor(KEY, token, EXPECT)).toEqual({ ok: false, problem: 'bad-signature' });
  });

  it('refuses a tampered cursor, whichever character changed', () => {
    const token = encodeVotesCursor(KEY, CURSOR);
    for (const index of [0, 10, 43, 50, token.length - 2, token.length - 1]) {
      const result = readVotesCursor(KEY, flip(token, index), EXPECT);
      expect(result.ok, `index ${index}`).toBe(false);
    }
  });

  it('refuses a payload with a forged position', () => {
    const token = encodeVotesCursor(KEY, CURSOR);
    const bytes = Buffer.from(token, 'base64url');
    const forged = Buffer.concat([bytes.subarray(0, 32), Buffer.from(bytes.subarray(32).toString().replace('"s":42', '"s":1'))]);
    expect(readVotesCursor(KEY, forged.toString('base64url'), EXPECT)).toEqual({ ok: false, problem: 'bad-signature' });
  });

  it('calls strings that are not cursors malformed', () => {
    for (const token of ['', 'not a cursor', 'abc', 'a+b/c=', 'AAAA', Buffer.alloc(40).toString('base64url')]) {
      const result = readVotesCursor(KEY, token, EXPECT);
      expect(result.ok, token).toBe(false);
    }
    expect(readVotesCursor(KEY, 'x.y', EXPECT)).toEqual({ ok: false, problem: 'malformed' });
  });

  it('calls a correctly signed payload that is not a cursor malformed', () => {
    // Built with the real signing scheme so only the payload check can refuse it.
    const payload = Buffer.from(JSON.stringify({ v: 1, p: CURSOR.projectId, t: 1, s: -1, i: 1 }));
    const mac = createHmac('sha256', KEY).update('votes-cursor\0').update(payload).digest();
    const token = Buffer.concat([mac, payload]).toString('base64url');
    expect(readVotesCursor(KEY, token, EXPECT)).toEqual({ ok: false, problem: 'malformed' });
  });

  it('refuses a cursor of another project', () => {
    const token = encodeVotesCursor(KEY, CURSOR);
    expect(readVotesCursor(KEY, token, { ...EXPECT, projectId: '1000000000000000011' })).toEqual({
      ok: false,
      problem: 'other-project',
    });
  });

  it('expires a cursor only when a lifetime is set', () => {
    const token = encodeVotesCursor(KEY, CURSOR);
    const later = CURSOR.issuedAt + 60_000;
    expect(readVotesCursor(KEY, token, { ...EXPECT, now: later, ttlSeconds: null }).ok).toBe(true);
    expect(readVotesCursor(KEY, token, { ...EXPECT, now: later - 1, ttlSeconds: 60 }).ok).toBe(true);
    expect(readVotesCursor(KEY, token, { ...EXPECT, now: later, ttlSeconds: 60 })).toEqual({ ok: false, problem: 'expired' });
  });
});
