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

/**
 * The callers of one write: they share one promise (a commit under load is asked for by hundreds
 * of calls, and a promise, two closures and a record for each would be allocated per vote).
 */
interface Group {
  readonly promise: Promise<void>;
  resolve: () => void;
  reject: (error: unknown) => void;
}

function newGroup(): Group {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<void>((ok, fail) => {
    resolve = ok;
    reject = fail;
  });
  // A failed write rejects its group whether or not a caller still listens: no unhandled rejection.
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}

const DONE: Promise<void> = Promise.resolve();

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
 * Callers are grouped by the write that covers them: the one running, when it took their change
 * already, else the next one; each group shares one promise.
 */
export function createCommitter(write: () => Promise<void>): Committer {
  let changed = 0;
  let written = 0;
  let running = false;
  /** The write under way: the last change it covers, and its callers. */
  let current: { target: number; group: Group } | undefined;
  /** The callers of the next write. */
  let next: Group | undefined;
  const counters: CommitterStats = { writes: 0, failedWrites: 0, lastError: undefined };

  async function run(): Promise<void> {
    await nextTurn();
    while (next !== undefined) {
      const group = next;
      next = undefined;
      const target = changed;
      current = { target, group };
      try {
        await write();
        written = Math.max(written, target);
        counters.writes += 1;
        counters.lastError = undefined;
        current = undefined;
        group.resolve();
      } catch (error) {
        counters.failedWrites += 1;
        counters.lastError = error;
        current = undefined;
        // Callers that arrived during the failed write are in `next`: a fresh attempt (the retry).
        group.reject(error);
      }
      if (next !== undefined) await nextTurn();
    }
    running = false;
  }

  return {
    change: () => ++changed,
    commit(seq = changed) {
      const wanted = Math.min(seq, changed);
      if (wanted <= written) return DONE;
      if (current !== undefined && wanted <= current.target) return current.group.promise;
      next ??= newGroup();
      if (!running) {
        running = true;
        void run();
      }
      return next.promise;
    },
    get pending() {
      return changed > written;
    },
    stats: () => ({ ...counters }),
  };
}
