/**
 * The receiver's answer-within deadline, at the cost of one small object per delivery: no promise,
 * no timer and no map entry each. Every watch has the same length, so deadlines come in the order
 * the watches were added (on a monotonic clock): a queue that a settled watch leaves at once, and
 * one coarse timer, running only while something is watched, that answers from its head what is late.
 */

/** One watched piece of work: settle it with {@link LateWatch.settle}. */
export interface Watched {
  /** When it is late, on the watch's clock. */
  readonly lateAt: number;
  /** Settled (done in time) or answered late; either way the other side does nothing. */
  done: boolean;
}

/** A watch in the queue: a doubly linked list, so that a settled watch leaves it at once. */
interface Node<T> extends Watched {
  /** What is watched, for `onLate`; dropped once settled. */
  subject: T | undefined;
  prev: Node<T> | undefined;
  next: Node<T> | undefined;
}

/** Made by {@link createLateWatch}. */
export interface LateWatch<T> {
  /** Watches `subject`: the watch's `onLate` gets it once when it is not settled within the deadline. */
  add(subject: T): Watched;
  /** True when `watched` was still open (now settled), false when it was already answered late. */
  settle(watched: Watched): boolean;
  /** Open watches (for tests). */
  size(): number;
}

/** Options of {@link createLateWatch}. */
export interface LateWatchOptions<T> {
  /** The deadline of every watch, ms. */
  withinMs: number;
  /** Runs for each watched subject not settled in time (one function for all: no closure per watch). */
  onLate: (subject: T) => void;
  /** How often the timer looks, ms. Default: a quarter of `withinMs`, between 10 and 250. */
  checkEveryMs?: number;
  /** Monotonic ms. Default `performance.now`. */
  clock?: () => number;
  /** Told of an `onLate` that threw. Default: ignored. */
  onError?: (error: unknown) => void;
}

/**
 * A queue of deadlines checked by one unref'd interval while it is not empty. A settled watch is
 * unlinked at once: nothing of a delivery answered in time outlives it (kept until the next sweep,
 * thousands of them a second would survive young-generation collections and load the old one).
 */
export function createLateWatch<T>(options: LateWatchOptions<T>): LateWatch<T> {
  const { withinMs, onLate } = options;
  const clock = options.clock ?? (() => performance.now());
  const everyMs = options.checkEveryMs ?? Math.max(10, Math.min(250, Math.floor(withinMs / 4)));
  let first: Node<T> | undefined;
  let last: Node<T> | undefined;
  let open = 0;
  let timer: NodeJS.Timeout | undefined;

  function unlink(node: Node<T>): void {
    node.done = true;
    node.subject = undefined;
    if (node.prev === undefined) first = node.next;
    else node.prev.next = node.next;
    if (node.next === undefined) last = node.prev;
    else node.next.prev = node.prev;
    node.prev = node.next = undefined;
    open -= 1;
  }

  function sweep(): void {
    const time = clock();
    // Deadlines only grow along the queue: the first one not yet due ends the sweep.
    while (first !== undefined && first.lateAt <= time) {
      const node = first;
      const subject = node.subject as T;
      unlink(node);
      try {
        onLate(subject);
      } catch (error) {
        options.onError?.(error);
      }
    }
    if (first === undefined && timer !== undefined) {
      clearInterval(timer);
      timer = undefined;
    }
  }

  return {
    add(subject) {
      const node: Node<T> = { lateAt: clock() + withinMs, done: false, subject, prev: last, next: undefined };
      if (last === undefined) first = node;
      else last.next = node;
      last = node;
      open += 1;
      if (timer === undefined) {
        timer = setInterval(sweep, everyMs);
        timer.unref();
      }
      return node;
    },
    settle(watched) {
      if (watched.done) return false;
      unlink(watched as Node<T>);
      return true;
    },
    size: () => open,
  };
}
