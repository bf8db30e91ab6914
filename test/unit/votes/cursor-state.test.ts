import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { timestampSchema } from '../../../src/api/schemas/common.js';
import { advanceCursorState, fallbackStartDate, firstPollStartDate, parseCursorState, resumeFrom, voteFromRecord } from '../../../src/votes/cursor-state.js';
import type { VoteRecord } from '../../../src/api/schemas/votes.js';

/*
 * The poller's votes: whatever the spelling of a time, the vote must be exactly the one the plain
 * formula gives (its key above all: the key is what dedupes a vote across both roads and
 * restarts), and the service's own spelling is kept as it is.
 */

/** The vote as `voteFromRecord` made it with `Date.parse` and a `Date` per time. */
const plain = (record: VoteRecord, projectId: string) => ({
  key: `${record.user_id}:${Date.parse(record.created_at)}`,
  userId: record.user_id,
  platformId: record.platform_id === '' ? null : record.platform_id,
  projectId,
  weight: record.weight,
  createdAt: new Date(Date.parse(record.created_at)).toISOString(),
  expiresAt: new Date(Date.parse(record.expires_at)).toISOString(),
  road: 'poll',
});

const instant = fc.integer({ min: Date.UTC(1970, 0, 1), max: Date.UTC(2200, 0, 1) });
/** The service's spelling, and others `Date.parse` reads: no fraction, an offset, a date alone. */
const spelling = (ms: number, how: number): string => {
  const iso = new Date(ms).toISOString();
  return [iso, iso, iso.slice(0, 19) + 'Z', `${new Date(ms + 3_600_000).toISOString().slice(0, 23)}+01:00`, iso.slice(0, 10)][how]!;
};
const record = fc.record({
  user_id: fc.oneof(fc.bigInt({ min: 1n, max: 10n ** 19n }).map(String), fc.string({ minLength: 1, maxLength: 8 })),
  platform_id: fc.oneof(fc.constant(''), fc.bigInt({ min: 1n, max: 10n ** 19n }).map(String)),
  weight: fc.integer({ min: 1, max: 2 }),
  created_at: fc.tuple(instant, fc.integer({ min: 0, max: 4 })).map(([ms, how]) => spelling(ms, how)),
  expires_at: fc.tuple(instant, fc.integer({ min: 0, max: 4 })).map(([ms, how]) => spelling(ms, how)),
});

describe('the votes of a cursor page', () => {
  it('are exactly what Date.parse and toISOString make of every spelling', () => {
    fc.assert(
      fc.property(record, (r) => {
        expect(voteFromRecord(r, '8')).toEqual(plain(r, '8'));
      }),
      { numRuns: 500 },
    );
  });

  it("keep the service's own text, and refuse a time that is not one as before", () => {
    const r: VoteRecord = { user_id: '1', platform_id: '2', weight: 1, created_at: '2026-11-21T15:07:10.123Z', expires_at: '2026-11-22T03:07:10.123Z' };
    const vote = voteFromRecord(r, '8');
    expect(vote.createdAt).toBe(r.created_at);
    expect(vote.key).toBe(`1:${Date.parse(r.created_at)}`);
    expect(() => voteFromRecord({ ...r, created_at: 'not a date' }, '8')).toThrow(RangeError);
  });

  it('move the checkpoint to the newest vote, whatever the spelling', () => {
    const votes = ['2026-11-21T15:00:00.000Z', '2026-11-21T17:00:00+01:00', '2026-11-21T15:30:00Z', '2026-11-21T14:00:00.000Z'].map((created_at, i) =>
      voteFromRecord({ user_id: String(i + 1), platform_id: '', weight: 1, created_at, expires_at: created_at }, '8'),
    );
    const state = advanceCursorState({ cursor: 'a', newestCreatedAt: '2026-11-21T15:10:00+00:00', newestKey: 'k', startDate: null }, { cursor: 'b', votes });
    // 17:00 at +01:00 is 16:00 UTC: the newest.
    expect(state).toEqual({ cursor: 'b', newestCreatedAt: '2026-11-21T16:00:00.000Z', newestKey: `2:${Date.parse('2026-11-21T16:00:00Z')}`, startDate: null });
    // A checkpoint newer than the page stays.
    expect(advanceCursorState({ cursor: 'a', newestCreatedAt: '2027-01-01T00:00:00Z', newestKey: 'k', startDate: null }, { cursor: 'c', votes })).toEqual({
      cursor: 'c',
      newestCreatedAt: '2027-01-01T00:00:00Z',
      newestKey: 'k',
      startDate: null,
    });
  });
});

describe('a timestamp field of a response', () => {
  it('accepts exactly the texts Date.parse reads', () => {
    fc.assert(
      fc.property(fc.oneof(fc.tuple(instant, fc.integer({ min: 0, max: 4 })).map(([ms, how]) => spelling(ms, how)), fc.string()), (text) => {
        const reads = !Number.isNaN(Date.parse(text));
        expect(timestampSchema.safeParse(text).success).toBe(reads);
      }),
      { numRuns: 500 },
    );
  });
});

describe("a first poll's start in the checkpoint", () => {
  const HOUR = 3_600_000;
  const now = Date.parse('2026-12-01T12:00:00.000Z');

  it('starts a first poll at the start, less the lookback, clamped inside the one-year limit', () => {
    const startedAt = now - HOUR;
    expect(resumeFrom(undefined, { startedAt, lookbackMs: 0 }, now)).toEqual({ startDate: new Date(startedAt) });
    expect(resumeFrom(undefined, { startedAt, lookbackMs: 12 * HOUR }, now)).toEqual({ startDate: new Date(startedAt - 12 * HOUR) });
    expect(firstPollStartDate({ startedAt, lookbackMs: 400 * 24 * HOUR }, now).getTime()).toBe(now - 365 * 24 * HOUR + HOUR);
    const stored = { cursor: 'c', newestCreatedAt: null, newestKey: null, startDate: '2026-12-01T10:00:00.000Z' };
    expect(resumeFrom(stored, { startedAt, lookbackMs: 0 }, now)).toEqual({ cursor: 'c' });
  });

  it("is kept from the first page on, and is where a refused cursor goes back to while no vote was seen", () => {
    const first = advanceCursorState(undefined, { cursor: 'a', votes: [], startDate: new Date(now - HOUR) });
    expect(first).toEqual({ cursor: 'a', newestCreatedAt: null, newestKey: null, startDate: new Date(now - HOUR).toISOString() });
    // A later page (or a fallback's) never moves it.
    expect(advanceCursorState(first, { cursor: 'b', votes: [], startDate: new Date(now) }).startDate).toBe(first.startDate);
    expect(fallbackStartDate(first, now + 5 * HOUR)).toEqual(new Date(now - HOUR));
    // A vote seen wins: the newest of them, inclusive.
    expect(fallbackStartDate({ ...first, newestCreatedAt: '2026-12-01T11:30:00.000Z' }, now)).toEqual(new Date('2026-12-01T11:30:00.000Z'));
    // A checkpoint that knows neither (an older version's): 12 hours back, a vote's lifetime.
    expect(fallbackStartDate({ cursor: 'a', newestCreatedAt: null, newestKey: null, startDate: null }, now)).toEqual(new Date(now - 12 * HOUR));
  });

  it("reads an older version's checkpoint (no startDate) as one, and forgets a startDate that is not a date", () => {
    expect(parseCursorState({ cursor: 'a', newestCreatedAt: null, newestKey: null })).toEqual({ cursor: 'a', newestCreatedAt: null, newestKey: null, startDate: null });
    expect(parseCursorState({ cursor: 'a', newestCreatedAt: null, newestKey: null, startDate: 'soon' })).toMatchObject({ cursor: 'a', startDate: null });
    expect(parseCursorState({ cursor: 'a', newestCreatedAt: null, newestKey: null, startDate: '2026-12-01T10:00:00.000Z' })).toMatchObject({ startDate: '2026-12-01T10:00:00.000Z' });
  });
});
