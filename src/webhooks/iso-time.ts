import { canonicalIsoMs } from '../contract/iso-time.js';

/**
 * Instants of webhook events without `Date.parse` on the hot path (see `canonicalIsoMs`): for a
 * time spelled as `toISOString` spells it, the canonical text is the text itself. The answers are
 * always the same as `Date.parse` and `new Date(Date.parse(text)).toISOString()` would give.
 */

/** `Date.parse(text)`, and `new Date(that).toISOString()` (undefined when it is not a date). */
export function instantOf(text: string): { ms: number; iso: string | undefined } {
  const fast = canonicalIsoMs(text);
  if (fast === fast) return { ms: fast, iso: text };
  const ms = Date.parse(text);
  return { ms, iso: Number.isFinite(ms) ? new Date(ms).toISOString() : undefined };
}

/** Whether `Date.parse(text)` is a date. */
export function isDateText(text: string): boolean {
  const fast = canonicalIsoMs(text);
  return fast === fast || Number.isFinite(Date.parse(text));
}

/**
 * `String(n)`, faster for the epoch milliseconds of our times: a double of 13 digits is slow to
 * print, two small integers are not. Exactly `String(n)` for every number.
 */
export function integerText(n: number): string {
  if (n < 1e9 || n >= 1e15 || !Number.isInteger(n)) return String(n);
  const high = Math.floor(n / 1e6);
  return `${high}${String(n - high * 1e6 + 1e6).slice(1)}`;
}
