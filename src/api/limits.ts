/**
 * Client-side limits, so the service never has to refuse: the v0 60/min bucket per token and the
 * announcement cooldown learnt from the last success or 429. Pure over an injected `now`.
 */

/** A sliding-window limiter: at most `limit` takes per `windowMs`. */
export interface SlidingWindow {
  /** Reserves a slot; returns how long to wait before using it (0 when free now). */
  reserve(now: number): number;
}

/** Creates a sliding window of `limit` per `windowMs`. */
export function createSlidingWindow(limit: number, windowMs: number): SlidingWindow {
  // A limit below 1 would index before the queue and hand out NaN waits.
  if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`a sliding window needs a whole limit of at least 1, not ${limit}`);
  if (!(windowMs > 0)) throw new RangeError(`a sliding window needs a positive windowMs, not ${windowMs}`);
  const taken: number[] = [];
  return {
    reserve(now) {
      while (taken.length > 0 && taken[0]! <= now - windowMs) taken.shift();
      // Reservations already queued in the future count too, so a burst is spread in order.
      const at = taken.length < limit ? now : Math.max(now, taken[taken.length - limit]! + windowMs);
      taken.push(at);
      taken.sort((a, b) => a - b);
      return at - now;
    },
  };
}

/** When the next announcement may be sent, per project. */
export interface CooldownTracker {
  /** Milliseconds left before `key` may act, 0 when free. */
  remaining(key: string, now: number): number;
  /** Records that `key` may act again at `until`. */
  block(key: string, until: number): void;
}

/** Creates an empty cooldown tracker. */
export function createCooldownTracker(): CooldownTracker {
  const until = new Map<string, number>();
  return {
    remaining: (key, now) => Math.max(0, (until.get(key) ?? 0) - now),
    block: (key, time) => {
      until.set(key, Math.max(until.get(key) ?? 0, time));
    },
  };
}
