/**
 * The emulator's clock: the base clock plus an offset that `POST /_emulator/clock` advances, so
 * cooldowns, expiry and code lifetimes can be tested without sleeping.
 */
export interface EmulatorClock {
  /** Current emulator time in epoch milliseconds. */
  now(): number;
  /** Moves the clock forward; returns the new time. */
  advance(seconds: number): number;
}

/** Creates a clock over `base` (default `Date.now`). */
export function createClock(base: () => number = Date.now): EmulatorClock {
  let offsetMs = 0;
  return {
    now: () => base() + offsetMs,
    advance(seconds: number) {
      offsetMs += Math.round(seconds * 1000);
      return base() + offsetMs;
    },
  };
}

/** Formats epoch milliseconds as ISO 8601 (the emulator's times on the wire). */
export function iso(ms: number): string {
  return new Date(ms).toISOString();
}
