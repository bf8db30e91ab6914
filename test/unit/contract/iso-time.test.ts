import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isoInto, isoMs, lastIsoInto } from '../../../src/contract/iso-time.js';
import { expiresAtMs } from '../../../src/votes/ledger-state.js';
import type { Vote } from '../../../src/votes/types.js';

/*
 * The ISO parsers of the hot paths (webhook events, the vote ledger, the vote reminders) must give
 * `Date.parse`'s answer for every text: exactly, through the arithmetic for the service's spelling
 * (`toISOString`'s), and through `Date.parse` itself for anything else.
 */

/** Instants of the years 100–9999 (the fast path's range) and beyond it. */
const MIN_FAST = Date.UTC(100, 0, 1);
const MAX_FAST = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
// A day short of the limits of Date (±8.64e15 ms), so that an offset of a day stays a date.
const instant = fc.integer({ min: -8_639_900_000_000_000, max: 8_639_900_000_000_000 });
const fastInstant = fc.integer({ min: MIN_FAST, max: MAX_FAST });

/** Other spellings of an instant `Date.parse` reads: no fraction, other fractions, offsets, lower-case z, date only. */
function otherSpellings(ms: number, offsetMinutes: number): string[] {
  const iso = new Date(ms).toISOString();
  const sign = offsetMinutes < 0 ? '-' : '+';
  const abs = Math.abs(offsetMinutes);
  const offset = `${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
  const local = new Date(ms + offsetMinutes * 60_000).toISOString().slice(0, 23);
  return [iso.slice(0, 19) + 'Z', iso.slice(0, 21) + 'Z', iso.slice(0, 22) + 'Z', `${iso.slice(0, 23)}456Z`, iso.slice(0, 23) + 'z', local + offset, iso.slice(0, 10), iso.slice(0, 16) + 'Z'];
}

/** Texts spelled almost as `toISOString` spells them, with one field out of range or one character wrong. */
const NEAR_MISSES = [
  '2024-02-30T00:00:00.000Z', // rolls over to 1 March in Date.parse
  '2023-02-29T12:00:00.000Z',
  '2024-02-29T12:00:00.000Z', // a leap day
  '1900-02-29T00:00:00.000Z',
  '2000-02-29T00:00:00.000Z',
  '2024-04-31T00:00:00.000Z',
  '2024-13-01T00:00:00.000Z',
  '2024-00-10T00:00:00.000Z',
  '2024-05-00T00:00:00.000Z',
  '2024-05-01T24:00:00.000Z', // the end of the day: Date.parse reads it as the next midnight
  '2024-05-01T23:60:00.000Z',
  '2024-05-01T23:59:60.000Z',
  '0099-12-31T23:59:59.999Z', // below the fast path's years
  '0100-01-01T00:00:00.000Z',
  '9999-12-31T23:59:59.999Z',
  '+002024-05-01T00:00:00.000Z',
  '-000001-01-01T00:00:00.000Z',
  '2024-05-01T00:00:00.0000Z',
  '2024-05-01T00:00:00.00Z',
  ' 2024-05-01T00:00:00.000Z',
  '2024-05-01T00:00:00.000Z ',
  '2024-05-01 00:00:00.000Z',
  '2024/05/01T00:00:00.000Z',
  '2024-05-01T00:00:00,000Z',
  '2024-05-01T00:00:00.000X',
  '2024-05-01T0a:00:00.000Z',
  '2024-05-01T00:00:00.00aZ',
  '2O24-05-01T00:00:00.000Z',
  '１０２4-05-01T00:00:00.000Z',
  '2024-05-01T00:00:00.000+02:00',
  'Wed, 01 May 2024 00:00:00 GMT',
  'not a date',
  '',
];

const same = (text: string) => {
  const expected = Date.parse(text);
  const out = new Float64Array(1);
  expect(Object.is(isoMs(text), expected), `isoMs(${JSON.stringify(text)})`).toBe(true);
  expect(isoInto(text, out, 0), `isoInto(${JSON.stringify(text)})`).toBe(!Number.isNaN(expected));
  expect(Object.is(out[0], expected)).toBe(true);
  expect(lastIsoInto(text, out, 0)).toBe(!Number.isNaN(expected));
  expect(Object.is(out[0], expected), `lastIsoInto(${JSON.stringify(text)})`).toBe(true);
};

describe('ISO times without Date.parse (contract/iso-time)', () => {
  it("reads every instant of the years 100-9999 spelled as toISOString spells it by arithmetic, with Date.parse's answer", () => {
    fc.assert(
      fc.property(fastInstant, (ms) => {
        const text = new Date(ms).toISOString();
        expect(isoMs(text)).toBe(ms);
        same(text);
      }),
      { numRuns: 2000 },
    );
  });

  it("gives Date.parse's answer for other spellings, offsets and instants out of the fast path's years", () => {
    fc.assert(
      fc.property(instant, fc.integer({ min: -14 * 60, max: 14 * 60 }), (ms, offset) => {
        same(new Date(ms).toISOString());
        for (const text of otherSpellings(ms, offset)) same(text);
      }),
      { numRuns: 500 },
    );
  });

  it("gives Date.parse's answer (NaN included) for near misses and for any text", () => {
    for (const text of NEAR_MISSES) same(text);
    // Any text, and texts of toISOString's shape with random characters put in.
    const shaped = fc.tuple(fastInstant, fc.nat({ max: 23 }), fc.string({ minLength: 1, maxLength: 1 })).map(([ms, at, c]) => {
      const iso = new Date(ms).toISOString();
      return iso.slice(0, at) + c + iso.slice(at + 1);
    });
    fc.assert(fc.property(fc.oneof(fc.string(), shaped), same), { numRuns: 3000 });
  });

  it('remembers only the text it read last, and never gives the answer of another text', () => {
    const out = new Float64Array(2);
    const a = '2024-05-01T00:00:00.000Z';
    // The same characters in another string object: compared, not mistaken.
    const b = ['2024-05-01T00:00:00', '.001Z'].join('');
    for (const text of [a, a, b, b, a, 'nonsense', a, `${a.slice(0, 23)}Z`, b]) {
      expect(lastIsoInto(text, out, 1)).toBe(!Number.isNaN(Date.parse(text)));
      expect(Object.is(out[1], Date.parse(text))).toBe(true);
      expect(out[0]).toBe(0); // only out[at] is written
    }
  });
});

describe("the vote ledger's expiry of a vote (expiresAtMs)", () => {
  const vote = (createdAt: string, expiresAt: string) => ({ createdAt, expiresAt }) as Vote;

  it('is expiresAt, else createdAt + 12 h, else 0: as with Date.parse', () => {
    fc.assert(
      fc.property(instant, instant, fc.constantFrom('iso', 'other', 'bad'), (created, expires, kind) => {
        const createdAt = new Date(created).toISOString();
        const expiresAt = kind === 'iso' ? new Date(expires).toISOString() : kind === 'other' ? new Date(expires).toISOString().slice(0, 19) + '+00:00' : 'soon';
        const byDateParse = Number.isFinite(Date.parse(expiresAt)) ? Date.parse(expiresAt) : created + 12 * 3_600_000;
        expect(expiresAtMs(vote(createdAt, expiresAt))).toBe(byDateParse);
      }),
      { numRuns: 1000 },
    );
    expect(expiresAtMs(vote('never', 'never'))).toBe(0);
  });
});
