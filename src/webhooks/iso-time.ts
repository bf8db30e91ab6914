/*
 * The webhook receiver's printing of a vote's time into its key. (Reading the times of an event
 * without `Date.parse`, `instantOf` and `isDateText`, is in `contract/iso-time.ts`, shared with
 * the votes poller and the API client's schemas.)
 */

/**
 * `String(n)`, faster for the epoch milliseconds of our times: a double of 13 digits is slow to
 * print, two small integers are not. Exactly `String(n)` for every number.
 */
export function integerText(n: number): string {
  if (n < 1e9 || n >= 1e15 || !Number.isInteger(n)) return String(n);
  const high = Math.floor(n / 1e6);
  return `${high}${String(n - high * 1e6 + 1e6).slice(1)}`;
}
