/**
 * Instants as the service spells them, without `Date.parse` on hot paths. The service writes its
 * times the way `Date.prototype.toISOString` does (`2026-11-21T15:07:10.123Z`); for exactly that
 * spelling, with every field in range, the epoch milliseconds are plain arithmetic. Anything else
 * (another ISO form, an offset, a day that rolls over such as April 31, a year below 100) is NaN
 * here and left to `Date.parse` by the callers, so their answers are always `Date.parse`'s.
 * (`Date.parse` costs about 0.4 µs a call on the bench machine; this, a few tens of ns.)
 */

const DAY_MS = 86_400_000;
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31] as const;

/** The two-digit number at `at`, or -1 when either character is not a digit. */
function twoDigits(text: string, at: number): number {
  const high = text.charCodeAt(at) - 48;
  const low = text.charCodeAt(at + 1) - 48;
  return high >= 0 && high <= 9 && low >= 0 && low <= 9 ? high * 10 + low : -1;
}

/** Days from 1970-01-01 to `year-month-day` (proleptic Gregorian; month 1–12). */
function daysFromEpoch(year: number, month: number, day: number): number {
  // Howard Hinnant's days_from_civil.
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}

/**
 * Epoch ms of `text` when it is spelled exactly as `toISOString` spells an instant of the years
 * 100–9999 (`YYYY-MM-DDTHH:mm:ss.sssZ`, every field in range); NaN otherwise (not an answer about
 * validity: use {@link instantOf} for that).
 */
export function canonicalIsoMs(text: string): number {
  // A delivery's two times are each looked at twice (checked, then converted): remember the last two.
  if (text === memo[0]) return memo[1];
  if (text === memo[2]) return memo[3];
  const ms = computeCanonicalIsoMs(text);
  memo[2] = memo[0];
  memo[3] = memo[1];
  memo[0] = text;
  memo[1] = ms;
  return ms;
}

const memo: [string, number, string, number] = ['', Number.NaN, '', Number.NaN];

/** Scratch of {@link computeCanonicalIsoMs}. */
const ONE = new Float64Array(1);

function computeCanonicalIsoMs(text: string): number {
  return canonicalIsoInto(text, ONE, 0) ? ONE[0]! : Number.NaN;
}

/**
 * {@link canonicalIsoMs} without the memo, into `out[at]`: false (and `out` untouched) when `text`
 * is not spelled as `toISOString` spells it. A typed array, not a return value, so that a caller
 * on a hot path gets the milliseconds (beyond a small integer) without a heap number each.
 */
function canonicalIsoInto(text: string, out: Float64Array, at: number): boolean {
  if (text.length !== 24) return false;
  if (text.charCodeAt(4) !== 45 || text.charCodeAt(7) !== 45 || text.charCodeAt(10) !== 84) return false; // - - T
  if (text.charCodeAt(13) !== 58 || text.charCodeAt(16) !== 58 || text.charCodeAt(19) !== 46 || text.charCodeAt(23) !== 90) return false; // : : . Z
  const century = twoDigits(text, 0);
  const yy = twoDigits(text, 2);
  const month = twoDigits(text, 5);
  const day = twoDigits(text, 8);
  const hour = twoDigits(text, 11);
  const minute = twoDigits(text, 14);
  const second = twoDigits(text, 17);
  const msHigh = twoDigits(text, 20);
  const msLow = text.charCodeAt(22) - 48;
  if (century < 1 || yy < 0 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23) return false;
  if (minute < 0 || minute > 59 || second < 0 || second > 59 || msHigh < 0 || msLow < 0 || msLow > 9) return false;
  const year = century * 100 + yy;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  if (day > (month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1]!)) return false;
  out[at] = daysFromEpoch(year, month, day) * DAY_MS + ((hour * 60 + minute) * 60 + second) * 1000 + msHigh * 10 + msLow;
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
