import type { AgentLogger } from '../../log/agent-logger.js';

/*
 * The one rule, for the file schedule and the Redis one alike, for logging the reminders skipped
 * because they were due longer than `votes.reminders.maxLateness` ago. Each is counted in the
 * metric (`skipped`); the log has one warn line per start with the count: the first look at the
 * schedule that skips any writes one line with all that look skipped (every batch of it, so a
 * start's catch-up of 100 000 reminders is one line). Later skips in the same run (an outage of
 * Redis, or of every agent, longer than maxLateness; a paused process) are summed, and written as
 * one line per interval (10 min) by the first look after it ends, or at stop: never a line per look.
 */

/** The shortest time between two lines of skipped reminders. */
const SUMMARY_INTERVAL_MS = 600_000;

/** Options of {@link createLateLog}. */
export interface LateLogOptions {
  logger: AgentLogger;
  /** Epoch ms (the schedule's clock). */
  now: () => number;
  /** `votes.reminders.maxLateness`, for the line. */
  maxLatenessMs: number;
}

/** The log of reminders skipped as late (see the module comment). */
export interface LateLog {
  /** Counts `n` reminders skipped by the look under way. */
  add(n: number): void;
  /** Ends a look: writes the run's first line, or the summary once the interval since the last line is over. */
  endLook(): void;
  /** Writes what was counted and not written yet (at stop). */
  flush(): void;
}

/** Creates the log of one schedule's skipped reminders, for one run. */
export function createLateLog(options: LateLogOptions): LateLog {
  const { logger, now, maxLatenessMs } = options;
  let pending = 0;
  let lastLineAt: number | undefined;
  const write = () => {
    if (lastLineAt === undefined) {
      logger.warn(
        { skipped: pending, maxLateness: maxLatenessMs },
        'vote reminders due longer than votes.reminders.maxLateness ago were skipped (they came due while no agent could send them); ' +
          'raise votes.reminders.maxLateness to send such reminders late. More skipped in this run are summed in one line per 10 min',
      );
    } else {
      const fields = { skipped: pending, maxLateness: maxLatenessMs, sinceMs: now() - lastLineAt };
      logger.warn(fields, 'more vote reminders due longer than votes.reminders.maxLateness ago were skipped since the last line');
    }
    lastLineAt = now();
    pending = 0;
  };
  return {
    add(n) {
      pending += n;
    },
    endLook() {
      if (pending > 0 && (lastLineAt === undefined || now() - lastLineAt >= SUMMARY_INTERVAL_MS)) write();
    },
    flush() {
      if (pending > 0) write();
    },
  };
}
