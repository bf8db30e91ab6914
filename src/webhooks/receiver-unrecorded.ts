import type { AgentLogger } from '../log/agent-logger.js';
import { createLineLimiter, type Delay, type IntervalSummary } from '../runtime/line-limiter.js';

/**
 * The log of webhook votes answered 503 (not recorded: Redis down, a full or read-only disk, a
 * pipeline too slow or stopping). During an outage every delivery and every retry of the service
 * fails alike, about 200 a second on one agent, so a line each would bury the log: the first one of
 * an outage is an `error` line with its cause and the fix, the ones after it are only counted, one
 * `warn` summary per interval gives the count and the causes seen, and an `info` line says when
 * votes are recorded again. Through the agent's one limiter (`runtime/line-limiter.ts`): even a
 * recording that fails and works in turn writes at most one line of each kind per interval.
 */

/** Why a vote was not recorded: the words of the log line. */
interface Unrecorded {
  /** The line's message (`could not record a webhook vote; answered 503 so the service retries`). */
  readonly msg: string;
  /** What went wrong, in one line (an error's message: never a secret). */
  readonly cause: string;
  /** What to do about it. */
  readonly fix: string;
}

/** Made by {@link createUnrecordedLog}. */
export interface UnrecordedLog {
  /** True from a 503 until a vote is recorded again: the hot path reads only this. */
  readonly failing: boolean;
  /** A vote answered 503; `fields` (the delivery's) go on its line when it is the first of an outage. */
  failed(why: Unrecorded, fields: Record<string, unknown>): void;
  /** A vote was recorded after 503s ({@link failing}): the outage is over. */
  recorded(): void;
  /** Writes the summary of the interval under way (the receiver stops). */
  flush(): void;
}

/** Options of {@link createUnrecordedLog}. */
export interface UnrecordedLogOptions {
  logger: AgentLogger;
  /** Epoch ms. */
  now: () => number;
  /** One summary per interval at most. Default 10 000 ms. */
  intervalMs?: number;
  schedule?: Delay | undefined;
}

/** What the receiver answers 503 to every vote it cannot record says, by the error's code. */
const FIXES: Record<string, string> = {
  redis_unavailable: 'bring Redis back (state.redis.url); votes are recorded again by themselves',
  store: 'free space on the disk of the state directory, or make it writable again (the cause names the file); votes are recorded again by themselves',
  votes_not_running: 'none if the agent is stopping (the service delivers them to the agent that runs next); otherwise the vote pipeline did not start: see its error',
  votes_stopped: 'none: the agent is stopping, and the service delivers them to the agent that runs next',
};
const RETRIED = 'the service delivers every vote answered 503 again';

/** The fix for an error thrown while recording (by its `code`, when it has one). */
export function fixFor(error: unknown): string {
  const code = typeof error === 'object' && error !== null && 'code' in error ? String((error as { code: unknown }).code) : '';
  return `${FIXES[code] ?? 'see the cause'}; ${RETRIED}`;
}

/** The fix for a vote not recorded within the deadline. */
export const LATE_FIX = `the state directory's disk or Redis answers too slowly: check its latency and load; ${RETRIED}`;

/** Creates the 503 log of one receiver (see the module comment). */
export function createUnrecordedLog(options: UnrecordedLogOptions): UnrecordedLog {
  const { logger, now } = options;
  const intervalMs = options.intervalMs ?? 10_000;
  /** The outage under way: when it began and how many were answered 503 since. */
  let outage: { since: number; answered: number } | undefined;
  const limiter = createLineLimiter<'failed' | 'recovered'>({
    now,
    linesPerInterval: 1,
    intervalMs,
    ...(options.schedule ? { schedule: options.schedule } : {}),
    summarise: (summary) => summarise(logger, summary, outage !== undefined),
  });
  return {
    get failing() {
      return outage !== undefined;
    },
    failed(why, fields) {
      const first = outage === undefined;
      outage ??= { since: now(), answered: 0 };
      outage.answered += 1;
      // Only the first of an outage may have a line; even that one is counted when an outage of this interval already had one.
      if (!first) limiter.count('failed', why.cause);
      else if (limiter.take('failed', why.cause)) {
        logger.error(
          { ...fields, status: 503, err: why.cause, fix: why.fix, summaryEveryMs: intervalMs },
          `${why.msg} (the next 503s are counted: one summary per ${intervalMs / 1000} s until votes are recorded again)`,
        );
      }
    },
    recorded() {
      if (outage === undefined) return;
      const { since, answered } = outage;
      outage = undefined;
      if (!limiter.take('recovered')) return;
      logger.info(
        { answered503: answered, since: new Date(since).toISOString(), forMs: now() - since },
        `webhook votes are recorded again: ${answered} answered 503 in the ${Math.round((now() - since) / 1000)} s before (the service delivers them again)`,
      );
    },
    flush: limiter.flush,
  };
}

function summarise(logger: AgentLogger, summary: IntervalSummary<'failed' | 'recovered'>, failing: boolean): void {
  const { kinds, notes, notesLeftOut, intervalMs } = summary;
  const answered = kinds.get('failed')?.total ?? 0;
  const recovered = kinds.get('recovered')?.total ?? 0;
  const causes = notesLeftOut > 0 ? [...notes, `${notesLeftOut} more`] : notes;
  const state = failing ? 'still failing' : 'recorded again since';
  logger.warn(
    { answered503: answered, loggedOneByOne: kinds.get('failed')?.written ?? 0, causes, ...(recovered > 0 ? { recoveredTimes: recovered } : {}), failing, intervalMs },
    `webhook votes answered 503 in the last ${intervalMs / 1000} s: ${answered} (causes: ${causes.join('; ') || 'none named'}); ${state}; the service delivers them again`,
  );
}
