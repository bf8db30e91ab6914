/** The outcome of one {@link RateLimiter.hit}. */
type RateLimitResult = { ok: true } | { ok: false; retryAfterSeconds: number };

/** Fixed-window counters on the emulator clock. */
export interface RateLimiter {
  /** Counts one request under `key`; refuses the request past `limit` in the current window. */
  hit(key: string, limit: number, windowMs: number): RateLimitResult;
  reset(): void;
}

/** Creates a rate limiter reading time from `now`. */
export function createRateLimiter(now: () => number): RateLimiter {
  const windows = new Map<string, { start: number; count: number }>();
  return {
    hit(key, limit, windowMs) {
      const time = now();
      const start = Math.floor(time / windowMs) * windowMs;
      let window = windows.get(key);
      if (!window || window.start !== start) {
        window = { start, count: 0 };
        windows.set(key, window);
        // Old windows are dead weight: drop them once the map grows.
        if (windows.size > 10_000) {
          for (const [k, w] of windows) if (w.start + windowMs <= time) windows.delete(k);
        }
      }
      if (window.count >= limit) {
        return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((start + windowMs - time) / 1000)) };
      }
      window.count += 1;
      return { ok: true };
    },
    reset() {
      windows.clear();
    },
  };
}
