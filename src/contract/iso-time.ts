/**
 * Left for the vote ledger and the reminders until their rewrite (i33-ledger) reads times with
 * `Date.parse`: nothing else uses this file, which goes with them. The receiver, the poller and
 * the API client's schemas read times with `Date.parse` already.
 *
 * Instants as the service spells them, without `Date.parse` on hot paths. The service writes its
 * times the way `Date.prototype.toISOString` does (`2026-11-21T15:07:10.123Z`); for exactly that
 * spelling, with every field in range, the epoch milliseconds are plain arithmetic. Anything else
 * (another ISO form, an offset, a day that rolls over such as April 31, a year below 100) is NaN
 * here and left to `Date.parse` by the callers, so their answers are always `Date.parse`'s.
 * (`Date.parse` costs about 0.4 µs a call on the bench machine; this, a few tens of ns.)
 */

const DAY_MS = 86_400_000;
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31] as const;

/** Days from 1970-01-01 to `year-month-day` (proleptic Gregorian; month 1–12; year 1–9999). */
function daysFromEpoch(year: number, month: number, day: number): number {
  // Howard Hinnant's days_from_civil; every quotient is of positive small integers, so `| 0` is
  // the floor (and cheaper than Math.floor on a double).
  const y = month <= 2 ? year - 1 : year;
  const era = (y / 400) | 0;
  const yearOfEra = y - era * 400;
  const dayOfYear = (((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) | 0) + day - 1;
  const dayOfEra = yearOfEra * 365 + ((yearOfEra / 4) | 0) - ((yearOfEra / 100) | 0) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}

function computeCanonicalIsoMs(text: string): number {
  const one = new Float64Array(1);
  return canonicalIsoInto(text, one, 0) ? one[0]! : Number.NaN;
}

/**
 * Epoch ms of `text`, spelled exactly as `toISOString` spells an instant of the years 100–9999
 * (`YYYY-MM-DDTHH:mm:ss.sssZ`, every field in range), into `out[at]`: false (and `out` untouched) when `text`
 * is not spelled as `toISOString` spells it. A typed array, not a return value, so that a caller
 * on a hot path gets the milliseconds (beyond a small integer) without a heap number each.
 */
function canonicalIsoInto(text: string, out: Float64Array, at: number): boolean {
  if (text.length !== 24) return false;
  // Each character read once. A digit d is 0–9 exactly when neither d nor 9 - d is negative: one
  // sign bit for all 17 (fewer branches than a range check each).
  const y0 = text.charCodeAt(0) - 48;
  const y1 = text.charCodeAt(1) - 48;
  const y2 = text.charCodeAt(2) - 48;
  const y3 = text.charCodeAt(3) - 48;
  const mo0 = text.charCodeAt(5) - 48;
  const mo1 = text.charCodeAt(6) - 48;
  const d0 = text.charCodeAt(8) - 48;
  const d1 = text.charCodeAt(9) - 48;
  const h0 = text.charCodeAt(11) - 48;
  const h1 = text.charCodeAt(12) - 48;
  const mi0 = text.charCodeAt(14) - 48;
  const mi1 = text.charCodeAt(15) - 48;
  const s0 = text.charCodeAt(17) - 48;
  const s1 = text.charCodeAt(18) - 48;
  const f0 = text.charCodeAt(20) - 48;
  const f1 = text.charCodeAt(21) - 48;
  const f2 = text.charCodeAt(22) - 48;
  const digits = y0 | (9 - y0) | y1 | (9 - y1) | y2 | (9 - y2) | y3 | (9 - y3) | mo0 | (9 - mo0) | mo1 | (9 - mo1) | d0 | (9 - d0) | d1 | (9 - d1);
  const time = h0 | (9 - h0) | h1 | (9 - h1) | mi0 | (9 - mi0) | mi1 | (9 - mi1) | s0 | (9 - s0) | s1 | (9 - s1) | f0 | (9 - f0) | f1 | (9 - f1) | f2 | (9 - f2);
  if ((digits | time) < 0) return false;
  if (text.charCodeAt(4) !== 45 || text.charCodeAt(7) !== 45 || text.charCodeAt(10) !== 84) return false; // - - T
  if (text.charCodeAt(13) !== 58 || text.charCodeAt(16) !== 58 || text.charCodeAt(19) !== 46 || text.charCodeAt(23) !== 90) return false; // : : . Z
  const year = y0 * 1000 + y1 * 100 + y2 * 10 + y3;
  const month = mo0 * 10 + mo1;
  const day = d0 * 10 + d1;
  const hour = h0 * 10 + h1;
  const minute = mi0 * 10 + mi1;
  const second = s0 * 10 + s1;
  if (year < 100 || month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  if (day > (month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1]!)) return false;
  out[at] = daysFromEpoch(year, month, day) * DAY_MS + ((hour * 60 + minute) * 60 + second) * 1000 + f0 * 100 + f1 * 10 + f2;
  return true;
}

/** `Date.parse(text)` into `out[at]` (see {@link canonicalIsoInto}); false when it is not a date (`out[at]` NaN). */
export function isoInto(text: string, out: Float64Array, at: number): boolean {
  if (canonicalIsoInto(text, out, at)) return true;
  out[at] = Date.parse(text);
  return out[at] === out[at];
}

/** The text {@link lastIsoInto} read last, and `Date.parse` of it (NaN: `Date.parse('')`). */
let lastText = '';
const lastMs = new Float64Array([Number.NaN]);

/**
 * {@link isoInto} that remembers the last text it read: the file vote ledger and the vote
 * reminders riding it each read a recorded vote's `expiresAt`, one right after the other, so the
 * second read is a comparison with the same string (the same object: no character compared), not
 * a parse. A miss costs one string comparison more than {@link isoInto}.
 */
export function lastIsoInto(text: string, out: Float64Array, at: number): boolean {
  if (text !== lastText) {
    isoInto(text, lastMs, 0);
    lastText = text;
  }
  const ms = lastMs[0]!;
  out[at] = ms;
  return ms === ms;
}

/**
 * `Date.parse(text)`, through the fast path when `text` is spelled as `toISOString` spells it
 * (without the memo of the last two: for a caller that reads each time once).
 */
export function isoMs(text: string): number {
  const fast = computeCanonicalIsoMs(text);
  return fast === fast ? fast : Date.parse(text);
}
