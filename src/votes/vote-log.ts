import type { AgentLogger } from '../log/agent-logger.js';
import type { Delay } from '../contract/timer-delay.js';
import { createLineLimiter } from '../runtime/line-limiter.js';
import type { Vote } from './types.js';

/**
 * The `info` lines an operator reads about votes: one when a new vote is recorded (`vote
 * received`) and one when every hook succeeded for it (`vote rewarded`). At thousands of votes a
 * second that would be thousands of lines a second, so each kind gets `linesPerInterval` lines per
 * interval of `intervalMs`; past that the votes are only counted, and one summary line at the end
 * of the interval gives the interval's totals (the agent's one line limiter,
 * `runtime/line-limiter.ts`). Duplicates are not logged here (the receiver logs them at `debug`);
 * failures are logged where they happen (`warn`, `error`).
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
  schedule?: Delay;
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

/** Whether `logger` writes `info` lines: a line is not even built otherwise. */
function infoEnabled(logger: AgentLogger): boolean {
  const check = (logger as { isLevelEnabled?: unknown }).isLevelEnabled;
  return typeof check !== 'function' || (check as (level: string) => boolean).call(logger, 'info');
}

/** Creates the vote lines of a pipeline. */
export function createVoteLog(options: VoteLogOptions): VoteLog {
  const { logger } = options;
  const limit = options.linesPerInterval ?? VOTE_LOG_DEFAULTS.linesPerInterval;
  const intervalMs = options.intervalMs ?? VOTE_LOG_DEFAULTS.intervalMs;
  const limiter = createLineLimiter<'received' | 'rewarded'>({
    now: options.now,
    linesPerInterval: limit,
    intervalMs,
    ...(options.schedule ? { schedule: options.schedule } : {}),
    summarise({ kinds }) {
      const received = kinds.get('received')?.total ?? 0;
      const rewarded = kinds.get('rewarded')?.total ?? 0;
      logger.info(
        { received, rewarded, loggedOneByOne: limit, intervalMs },
        `votes in the last ${intervalMs / 1000} s: ${received} received, ${rewarded} rewarded ` +
          `(the first ${limit} of each were logged one by one)`,
      );
    },
  });

  return {
    received(vote, traceId) {
      if (!infoEnabled(logger) || !limiter.take('received')) return;
      const fields: Record<string, unknown> = { key: vote.key, road: vote.road, userId: vote.userId };
      if (vote.voteId !== undefined) fields.voteId = vote.voteId;
      if (traceId !== undefined) fields.traceId = traceId;
      logger.info(fields, 'vote received');
    },
    rewarded(vote, hooks) {
      if (!infoEnabled(logger) || !limiter.take('rewarded')) return;
      logger.info({ key: vote.key, hooks }, 'vote rewarded');
    },
    flush: limiter.flush,
  };
}
