import type { AgentLogger } from '../log/agent-logger.js';
import { realSchedule, type Schedule } from './pipeline-parts.js';
import type { Vote } from './types.js';

/**
 * The `info` lines an operator reads about votes: one when a new vote is recorded (`vote
 * received`) and one when every hook succeeded for it (`vote rewarded`). At thousands of votes a
 * second that would be thousands of lines a second, so each kind gets `linesPerInterval` lines per
 * interval of `intervalMs`; past that the votes are only counted, and one summary line at the end
 * of the interval gives the interval's totals. Duplicates are not logged here (the receiver logs
 * them at `debug`); failures are logged where they happen (`warn`, `error`).
 */

/** Defaults of {@link VoteLogOptions}: 50 lines of each kind per 10 s, at most 10 lines a second in all. */
export const VOTE_LOG_DEFAULTS = { linesPerInterval: 50, intervalMs: 10_000 } as const;

/** Options of {@link createVoteLog}. */
export interface VoteLogOptions {
  logger: AgentLogger;
  /** Epoch ms. */
  now: () => number;
  /** Lines of each kind written one by one per interval; the rest are counted. Default 50. */
  linesPerInterval?: number;
  /** The interval, ms. Default 10 000. */
  intervalMs?: number;
  /** The timer of the summary at an interval's end. Default: an unref'd `setTimeout`. */
  schedule?: Schedule;
}

/** The vote lines of one pipeline (see the module comment). */
export interface VoteLog {
  /** A new vote was recorded as pending (`traceId`: the delivery's, for a signed webhook). */
  received(vote: Vote, traceId?: string): void;
  /** Every hook (`hooks`) succeeded for `vote`. */
  rewarded(vote: Vote, hooks: readonly string[]): void;
  /** Writes the summary of the interval under way, if it has one (the pipeline stops). */
  flush(): void;
}

type Kind = 'received' | 'rewarded';

/** Whether `logger` writes `info` lines: a line is not even built otherwise. */
function infoEnabled(logger: AgentLogger): boolean {
  const check = (logger as { isLevelEnabled?: unknown }).isLevelEnabled;
  return typeof check !== 'function' || (check as (level: string) => boolean).call(logger, 'info');
}

/** Creates the vote lines of a pipeline. */
export function createVoteLog(options: VoteLogOptions): VoteLog {
  const { logger, now } = options;
  const limit = options.linesPerInterval ?? VOTE_LOG_DEFAULTS.linesPerInterval;
  const intervalMs = options.intervalMs ?? VOTE_LOG_DEFAULTS.intervalMs;
  const schedule = options.schedule ?? realSchedule;
  /** When the interval under way began (none: the next line begins one). */
  let since: number | undefined;
  const counts: Record<Kind, number> = { received: 0, rewarded: 0 };
  let cancelSummary: (() => void) | undefined;

  /** Ends the interval under way: its summary when some of its votes were only counted. */
  function endInterval(): void {
    cancelSummary?.();
    cancelSummary = undefined;
    if (counts.received > limit || counts.rewarded > limit) {
      const { received, rewarded } = counts;
      logger.info(
        { received, rewarded, loggedOneByOne: limit, intervalMs },
        `votes in the last ${intervalMs / 1000} s: ${received} received, ${rewarded} rewarded (the first ${limit} of each were logged one by one)`,
      );
    }
    since = undefined;
    counts.received = 0;
    counts.rewarded = 0;
  }

  /** Counts one line of `kind`; true when it is to be written. */
  function take(kind: Kind): boolean {
    const at = now();
    if (since !== undefined && at - since >= intervalMs) endInterval();
    since ??= at;
    counts[kind] += 1;
    if (counts[kind] <= limit) return true;
    cancelSummary ??= schedule(() => {
      cancelSummary = undefined;
      endInterval();
    }, since + intervalMs - at);
    return false;
  }

  return {
    received(vote, traceId) {
      if (!infoEnabled(logger) || !take('received')) return;
      const fields: Record<string, unknown> = { key: vote.key, road: vote.road, userId: vote.userId };
      if (vote.voteId !== undefined) fields.voteId = vote.voteId;
      if (traceId !== undefined) fields.traceId = traceId;
      logger.info(fields, 'vote received');
    },
    rewarded(vote, hooks) {
      if (!infoEnabled(logger) || !take('rewarded')) return;
      logger.info({ key: vote.key, hooks }, 'vote rewarded');
    },
    flush: endInterval,
  };
}
