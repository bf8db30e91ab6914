/**
 * The one way the agent keeps a flood of alike events from flooding its log: per kind, the first
 * `linesPerInterval` events of an interval get a line of their own, the rest are only counted, and
 * at the end of an interval in which something was only counted, one summary line gives the
 * interval's counts. The vote lines (`vote received`, `vote rewarded`), the webhook refusals and
 * the webhook 503s all go through it: thousands of events a second write a few lines per interval.
 *
 * An interval begins with the first event after the previous one ended, so a quiet agent keeps no
 * timer; one timer runs only while an interval has something to summarise, and writes the summary
 * on time even when no event follows.
 */

import { unrefDelay, type Delay } from '../contract/timer-delay.js';

/** One interval's events of one kind. */
interface KindCount {
  /** Every event of the kind in the interval. */
  total: number;
  /** Those that had a line of their own. */
  written: number;
}

/** What the summary of an interval hears. */
export interface IntervalSummary<K extends string> {
  intervalMs: number;
  /** When the interval began, epoch ms (a flush ends it before `intervalMs` passed). */
  startedAt: number;
  /** Each kind seen in the interval, in the order first seen. */
  kinds: ReadonlyMap<K, KindCount>;
  /** Events of every kind that were only counted (at least 1: an interval without any has no summary). */
  counted: number;
  /** The distinct notes the interval's events carried (a cause, an address), at most `maxNotes`. */
  notes: readonly string[];
  /** Events whose note was not kept, as `maxNotes` were already kept. */
  notesLeftOut: number;
}

/** Options of {@link createLineLimiter}. */
export interface LineLimiterOptions<K extends string> {
  /** Epoch ms (any clock that only moves forward). */
  now: () => number;
  /** Lines of each kind written one by one per interval. */
  linesPerInterval: number;
  /** The interval, ms. */
  intervalMs: number;
  /** Writes the summary line of an interval (called only when something was only counted). */
  summarise: (summary: IntervalSummary<K>) => void;
  /** Distinct notes kept per interval for the summary. Default 3. */
  maxNotes?: number;
  /** The timer of the summary at an interval's end. Default {@link unrefDelay}. */
  schedule?: Delay;
}

/** Made by {@link createLineLimiter}. */
export interface LineLimiter<K extends string> {
  /** Counts one event of `kind`; true when it is to have a line of its own (the caller writes it). */
  take(kind: K, note?: string): boolean;
  /** Counts one event of `kind` that has no line of its own whatever the limit: only the summary tells of it. */
  count(kind: K, note?: string): void;
  /** Writes the summary of the interval under way, if it has one, and ends it (a stop). */
  flush(): void;
}

/** Creates a limiter (see the module comment). */
export function createLineLimiter<K extends string>(options: LineLimiterOptions<K>): LineLimiter<K> {
  const { now, linesPerInterval: limit, intervalMs, summarise } = options;
  const maxNotes = options.maxNotes ?? 3;
  const schedule = options.schedule ?? unrefDelay;
  /** When the interval under way began (none: the next event begins one). */
  let since: number | undefined;
  let kinds = new Map<K, KindCount>();
  let counted = 0;
  let notes = new Set<string>();
  let notesLeftOut = 0;
  let cancelSummary: (() => void) | undefined;

  function endInterval(): void {
    cancelSummary?.();
    cancelSummary = undefined;
    const summary: IntervalSummary<K> | undefined =
      counted > 0 ? { intervalMs, startedAt: since ?? now(), kinds, counted, notes: [...notes], notesLeftOut } : undefined;
    since = undefined;
    kinds = new Map();
    counted = 0;
    notes = new Set();
    notesLeftOut = 0;
    // After the reset: a summary that logs through something limited must not see this interval again.
    if (summary !== undefined) summarise(summary);
  }

  /** Counts one event; true when it gets its own line. */
  function add(kind: K, note: string | undefined, mayWrite: boolean): boolean {
    const at = now();
    if (since !== undefined && at - since >= intervalMs) endInterval();
    since ??= at;
    let seen = kinds.get(kind);
    if (seen === undefined) kinds.set(kind, (seen = { total: 0, written: 0 }));
    seen.total += 1;
    if (note !== undefined && !notes.has(note)) {
      if (notes.size < maxNotes) notes.add(note);
      else notesLeftOut += 1;
    }
    if (mayWrite && seen.written < limit) {
      seen.written += 1;
      return true;
    }
    counted += 1;
    cancelSummary ??= schedule(() => {
      cancelSummary = undefined;
      endInterval();
    }, since + intervalMs - at);
    return false;
  }

  return {
    take: (kind, note) => add(kind, note, true),
    count: (kind, note) => void add(kind, note, false),
    flush: endInterval,
  };
}
