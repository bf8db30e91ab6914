import type { AgentLogger } from '../log/agent-logger.js';
import type { Delay } from '../contract/timer-delay.js';
import { createLineLimiter, type IntervalSummary } from './line-limiter.js';

/**
 * The warn lines of refused requests (a push with a wrong key, a status page action without the
 * admin token, a request for another host), written as the webhook receiver writes its refusals:
 * the first of each reason in an interval with a line of its own, the rest counted, and one
 * summary line at the interval's end. Whoever can reach a port cannot flood the log through it.
 */

/** Options of {@link createRefusalLog}. */
export interface RefusalLogOptions {
  logger: AgentLogger;
  /** What was refused, in the summary (`pushes`, `status page requests`). */
  what: string;
  /** Epoch ms. */
  now: () => number;
  /** Default 10 000. */
  intervalMs?: number;
  /** The timer of the summary. Default: an unref'd `setTimeout`. */
  schedule?: Delay;
}

/** Made by {@link createRefusalLog}. */
export interface RefusalLog<K extends string> {
  /** One refusal: `message` at warn with `fields` (and `remote`) if it is the first of its reason in the interval, else only counted. */
  refused(reason: K, remote: string | undefined, fields: Record<string, unknown>, message: string): void;
  /** Writes the summary of the interval under way, if it has one (a stop). */
  flush(): void;
}

/** Refusals: the first of each reason at once, the rest in one summary per 10 s. */
const INTERVAL_MS = 10_000;

/** The summary line of an interval's refusals past the first of each reason (the webhook receiver's too). */
export function refusalSummary(logger: AgentLogger, what: string, summary: IntervalSummary<string>): void {
  const { kinds, notes, notesLeftOut, intervalMs } = summary;
  const byReason: Record<string, number> = {};
  let written = 0;
  for (const [reason, seen] of kinds) {
    byReason[reason] = seen.total;
    written += seen.written;
  }
  const words = Object.entries(byReason).map(([reason, total]) => `${total} ${reason}`);
  logger.warn(
    { refused: byReason, loggedOneByOne: written, remotes: notesLeftOut > 0 ? [...notes, `${notesLeftOut} more`] : notes, intervalMs },
    `${what} refused in the last ${intervalMs / 1000} s: ${words.join(', ')} (the first of each reason was logged)`,
  );
}

/** Creates a refusal log (see the module comment). */
export function createRefusalLog<K extends string>(options: RefusalLogOptions): RefusalLog<K> {
  const { logger, what } = options;
  const limiter = createLineLimiter<K>({
    now: options.now,
    linesPerInterval: 1,
    intervalMs: options.intervalMs ?? INTERVAL_MS,
    ...(options.schedule ? { schedule: options.schedule } : {}),
    summarise: (summary) => refusalSummary(logger, what, summary),
  });
  return {
    refused(reason, remote, fields, message) {
      if (limiter.take(reason, remote)) logger.warn({ reason, remote, ...fields }, message);
    },
    flush: () => limiter.flush(),
  };
}
