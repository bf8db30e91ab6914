/**
 * The one clamp every computed timer delay goes through (`setTimeout(f, timerDelay(ms))`;
 * test/architecture/runtime-portability.test.ts holds src/ to it). It lives down here, beside the
 * error family, because every layer arms timers, the emulator and the infrastructure included.
 *
 * Why: Node, Bun and Deno keep a timer's delay in a 32-bit signed integer. A longer one (a
 * deadline read on one clock minus the time on another: 267 days, once) is replaced by 1 ms with a
 * `TimeoutOverflowWarning`, so a wait meant to be long ends at once; a negative one prints a
 * `TimeoutNegativeWarning` on Node 24 and later, and NaN a `TimeoutNaNWarning`.
 */

/** The longest delay a timer takes: 2^31 - 1 ms, about 24.8 days. */
export const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

/**
 * `ms` as a timer can wait it: 0 for a negative or NaN delay (the time has come), at most
 * {@link MAX_TIMER_DELAY_MS} for a longer one (whoever waits longer re-arms when it fires, as the
 * schedules do; a stop deadline that far away is no deadline). Fractions are kept: timers floor them.
 */
export function timerDelay(ms: number): number {
  if (!(ms > 0)) return 0;
  return Math.min(ms, MAX_TIMER_DELAY_MS);
}

/**
 * Runs `callback` once after `delayMs` and returns what cancels it: the one timer shape that the
 * pipeline, the reminders, the log limiter and the write probe take, so that tests pass a manual one.
 */
export type Delay = (callback: () => void, delayMs: number) => () => void;

/** The default {@link Delay}: `setTimeout`, unref'd so that a library agent never holds the process open. */
export const unrefDelay: Delay = (callback, delayMs) => {
  const timer = setTimeout(callback, timerDelay(delayMs));
  timer.unref();
  return () => clearTimeout(timer);
};
