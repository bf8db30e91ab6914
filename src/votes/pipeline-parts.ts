import { ListingAgentError } from '../errors.js';
import { unrefDelay } from '../runtime/line-limiter.js';
import type { Vote, VoteHook } from './types.js';

/**
 * Runs `callback` after `delayMs` and returns a function that cancels it. The pipeline's only
 * timer (retry backoff, periodic compaction, the stop deadline): tests inject a manual one.
 */
export type Schedule = (callback: () => void, delayMs: number) => () => void;

/** The default {@link Schedule}: `setTimeout`, unref'd so that a library agent never holds the process open. */
export const realSchedule: Schedule = unrefDelay;

/**
 * Waits until `work` is empty (its promises remove themselves when settled, and may add others
 * meanwhile) or `delayMs` passed on `schedule`; resolves true when everything settled in time.
 */
export async function settleWithin(work: { readonly size: number } & Iterable<Promise<unknown>>, delayMs: number, schedule: Schedule): Promise<boolean> {
  let timedOut = false;
  let wake: () => void = () => undefined;
  const cancel = schedule(() => {
    timedOut = true;
    wake();
  }, delayMs);
  try {
    while (work.size > 0 && !timedOut) {
      const deadline = new Promise<void>((resolve) => (wake = resolve));
      await Promise.race([Promise.allSettled([...work]), deadline]);
    }
  } finally {
    cancel();
  }
  return !timedOut;
}

/** Exponential backoff settings of hook retries. */
export interface BackoffOptions {
  /** The ceiling of the first retry's delay. Default 1000 ms. */
  baseMs?: number;
  /** The largest ceiling. Default 300 000 ms (5 min). */
  maxMs?: number;
}

/**
 * The delay before retry number `failedAttempt` (1 after the first failure): "full jitter", a
 * uniform pick in `[0, min(maxMs, baseMs * 2^(failedAttempt - 1)))`, so that many votes failing
 * together (a bot restarting) do not come back together.
 */
export function backoffDelay(failedAttempt: number, random: () => number, options: BackoffOptions = {}): number {
  const baseMs = options.baseMs ?? 1_000;
  const maxMs = options.maxMs ?? 300_000;
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.max(0, failedAttempt - 1));
  return Math.floor(random() * ceiling);
}

/** A first-in first-out queue with O(1) `shift` (an array's `shift` copies: too slow for 100 000 votes). */
export interface Fifo<T> {
  readonly length: number;
  push(item: T): void;
  shift(): T | undefined;
  clear(): void;
}

/** Creates an empty {@link Fifo}. */
export function createFifo<T>(): Fifo<T> {
  let items: (T | undefined)[] = [];
  let head = 0;
  return {
    get length() {
      return items.length - head;
    },
    push(item) {
      items.push(item);
    },
    shift() {
      if (head >= items.length) return undefined;
      const item = items[head];
      items[head] = undefined;
      head += 1;
      // Drop the consumed front now and then, so the array does not grow without end.
      if (head > 1024 && head * 2 > items.length) {
        items = items.slice(head);
        head = 0;
      }
      return item;
    },
    clear() {
      items = [];
      head = 0;
    },
  };
}

/** A hook failure as one line for logs and dead letters (the hook implementations keep secrets out). */
export function errorText(error: unknown): string {
  const text = error instanceof Error ? error.message || error.name : String(error);
  return text.length > 500 ? `${text.slice(0, 500)}...` : text;
}

/** A vote with hooks outstanding in this run of the pipeline. */
export interface Job {
  vote: Vote;
  outstanding: number;
  /**
   * Record each hook's success, also the last one's. Needed once the vote has a dead letter: its
   * entry then outlives `complete`, and a replay must know which hooks were done. Otherwise the
   * `complete` record says it for the last hook, one record per vote fewer.
   */
  recordEachHook: boolean;
  /** A hook gave up on it (now, or in an earlier run): it is not `vote rewarded` when its hooks are done. */
  gaveUp: boolean;
}

/** One hook for one vote; queued behind the same user's earlier votes for the same hook. */
export interface Task {
  job: Job;
  hook: VoteHook;
  attempt: number;
  generation: number;
}

/** The error of a call the pipeline cannot take (not started, or stopped). */
export const notRunning = (what: string) =>
  new ListingAgentError('votes_not_running', `cannot ${what}: the vote pipeline is not running (call start() first; after stop() it takes no new votes)`);
