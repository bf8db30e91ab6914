/** Counters of a {@link Committer}. */
interface CommitterStats {
  /** Writes that succeeded. */
  writes: number;
  /** Writes that failed (each rejected the callers it was for). */
  failedWrites: number;
  /** The error of the last failed write, until a write succeeds. */
  lastError: unknown;
}

/**
 * Serialises writes of a whole document and coalesces them (group commit). Every change takes a
 * sequence number; `commit(seq)` resolves once a write that started after that change succeeded.
 * Only one write runs at a time, so two renames never race; callers arriving while one runs share
 * the next write, so 100 concurrent durable changes cost two writes or so, not 100.
 */
export interface Committer {
  /** Records a change (made in memory already) and returns its sequence number. */
  change(): number;
  /**
   * Resolves when a write covering change `seq` (default: every change so far) has succeeded;
   * rejects with that write's error if the write meant for it fails. A later call retries.
   */
  commit(seq?: number): Promise<void>;
  /** True while some change has not reached a successful write. */
  readonly pending: boolean;
  stats(): CommitterStats;
}

interface Waiter {
  seq: number;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * Resolves in the check phase of this turn of the event loop, after its poll phase: the changes
 * made by everything that turn reads (a burst of webhook deliveries, the hooks that just ended, the
 * callers woken by the last write) join the next write. A microtask would start it after the first
 * of them only: twice the writes (each a write and an fsync of fixed cost) for the same changes.
 * Alone, a change waits for the rest of its turn, microseconds.
 */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Creates a committer around `write`, which must take its snapshot of the document synchronously,
 * before its first `await`: the committer counts the changes made until that moment as written.
 */
export function createCommitter(write: () => Promise<void>): Committer {
  let changed = 0;
  let written = 0;
  let running = false;
  let waiters: Waiter[] = [];
  const counters: CommitterStats = { writes: 0, failedWrites: 0, lastError: undefined };

  function settle(target: number, error: unknown, failed: boolean): void {
    const done = waiters.filter((waiter) => waiter.seq <= target);
    waiters = waiters.filter((waiter) => waiter.seq > target);
    for (const waiter of done) {
      if (failed) waiter.reject(error);
      else waiter.resolve();
    }
  }

  async function run(): Promise<void> {
    await nextTurn();
    while (waiters.length > 0) {
      const target = changed;
      try {
        await write();
        written = Math.max(written, target);
        counters.writes += 1;
        counters.lastError = undefined;
        settle(target, undefined, false);
      } catch (error) {
        counters.failedWrites += 1;
        counters.lastError = error;
        // Waiters that arrived during the failed write remain and get a fresh attempt (the retry).
        settle(target, error, true);
      }
      if (waiters.length > 0) await nextTurn();
    }
    running = false;
  }

  return {
    change: () => ++changed,
    commit(seq = changed) {
      const wanted = Math.min(seq, changed);
      if (wanted <= written) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        waiters.push({ seq: wanted, resolve, reject });
        if (!running) {
          running = true;
          void run();
        }
      });
    },
    get pending() {
      return changed > written;
    },
    stats: () => ({ ...counters }),
  };
}
