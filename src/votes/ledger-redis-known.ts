/**
 * The Redis vote ledger's local memory of vote keys, behind its synchronous `has()`. Redis is the
 * truth (`recordPending` decides there); this only answers quickly, so it may be stale and it is
 * bounded: at most `capacity` keys, the oldest remembered dropped first.
 *
 * A key is either *held* (pending or dead-lettered as far as this agent knows: never forgotten
 * by time) or *remembered* until its forget-at (`expiresAt + keepKeysFor`, epoch ms) passes a
 * `forget()`; `0` means unknown.
 */
export interface KnownKeys {
  readonly capacity: number;
  has(key: string): boolean;
  /** Whether `key` is held (pending or lettered as far as this agent knows). */
  isHeld(key: string): boolean;
  /** Holds `key` (pending or lettered); `lettered` keeps it held through `release`. */
  hold(key: string, forgetAt: number, lettered?: boolean): void;
  /** Remembers `key` until `forgetAt` (epoch ms; `Infinity` holds it). */
  remember(key: string, forgetAt: number): void;
  /** The vote finished: remembered until its forget-at, unless it was dead-lettered here. */
  release(key: string): void;
  /** Drops remembered keys whose forget-at is before `now`. */
  forget(now: number): void;
  clear(): void;
}

const known = (ms: number) => (Number.isFinite(ms) ? Math.max(1, ms) : 0);

/** Creates an empty {@link KnownKeys} of at most `capacity` keys. */
export function createKnownKeys(capacity: number): KnownKeys {
  /** Key → forget-at; negative while held. */
  const keys = new Map<string, number>();
  const lettered = new Set<string>();

  function put(key: string, value: number): void {
    keys.set(key, value);
    while (keys.size > capacity) {
      const oldest = keys.keys().next().value as string;
      keys.delete(oldest);
      lettered.delete(oldest);
    }
  }

  function hold(key: string, forgetAt: number, isLettered = false): void {
    put(key, -(known(forgetAt) || Math.abs(keys.get(key) ?? 0)));
    if (isLettered) lettered.add(key);
  }

  return {
    capacity,
    has: (key) => keys.has(key),
    isHeld: (key) => (keys.get(key) ?? 1) <= 0,
    hold,
    remember(key, forgetAt) {
      if (forgetAt === Infinity) return hold(key, forgetAt);
      const current = keys.get(key);
      if (current !== undefined && current <= 0) return; // held here: this agent knows better
      put(key, known(forgetAt));
    },
    release(key) {
      const current = keys.get(key);
      if (current === undefined || lettered.has(key)) return;
      // Held with an unknown forget-at (read from Redis as pending): Redis keeps the truth.
      if (current === 0) keys.delete(key);
      else keys.set(key, Math.abs(current));
    },
    forget(now) {
      for (const [key, at] of keys) {
        if (at > 0 && at < now) keys.delete(key);
      }
    },
    clear() {
      keys.clear();
      lettered.clear();
    },
  };
}
