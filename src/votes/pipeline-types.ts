import type { IngestDetails, IngestResult } from '../runtime/votes.js';
import type { AgentLogger } from '../log/agent-logger.js';
import type { AgentMetrics } from '../runtime/metrics.js';
import type { BackoffOptions, Schedule } from './pipeline-parts.js';
import type { DeadLetter, Vote, VoteHook, VoteLedger, VotesEvents } from './types.js';

export type { IngestDetails, IngestResult } from '../runtime/votes.js';

/** The events the pipeline emits (the agent's `emit` fits). */
export type VotePipelineEmit = <K extends 'voteReceived' | 'voteDeadLettered' | 'voteHookRan'>(event: K, ...args: VotesEvents[K]) => void;

/** Options of `createVotePipeline`. */
export interface VotePipelineOptions {
  /** Where votes are recorded. The pipeline opens it in `start()`; its owner closes it after `stop()`. */
  ledger: VoteLedger;
  /** The reward hooks; names must be unique. Each vote reaches each of them. */
  hooks: readonly VoteHook[];
  logger: AgentLogger;
  /** Counts `votesReceived{road}` and `hookRuns{hook, result}`. Default: none. */
  metrics?: Pick<AgentMetrics, 'votesReceived' | 'hookRuns'>;
  /** Current time in epoch ms. */
  now: () => number;
  /** Emits `voteReceived`, `voteHookRan` and `voteDeadLettered`. Default: none. */
  emit?: VotePipelineEmit;
  /** Uniform in [0, 1), for the retry jitter. Default `Math.random`. */
  random?: () => number;
  /** Retry backoff. Default `{ baseMs: 1000, maxMs: 300000 }`. */
  backoff?: BackoffOptions;
  /** The timer of retries, compaction and the stop deadline. Default: unref'd `setTimeout`. */
  schedule?: Schedule;
  /** Hook calls in flight at once, over all hooks. Default 16. */
  concurrency?: number;
  /** How often the ledger is compacted while running. Default 300 000 ms (5 min). */
  compactEveryMs?: number;
  /**
   * Votes waiting for their hooks before `ingest(votes, 'poll')` holds its caller (the poller
   * then fetches its next page only once the hooks caught up to half of this), so catching up a
   * long history never holds it all in memory. Webhook deliveries are never held: they must be
   * answered within the service's deadline. Default 2000.
   */
  maxBacklog?: number;
  /**
   * The `info` lines of votes (`vote received`, `vote rewarded`): at most `linesPerInterval` (50)
   * of each kind per `intervalMs` (10 s), then one summary line per interval with the counts (see
   * `vote-log.ts`). Its timer is `schedule`.
   */
  voteLog?: { linesPerInterval?: number; intervalMs?: number };
  /**
   * Called once a vote's hooks are all done in this run: `gaveUp` when one of them was
   * dead-lettered. Counts reminders (not hook calls). Default: none.
   */
  onFinished?: (vote: Vote, gaveUp: boolean) => void;
}


/**
 * The vote pipeline: one for both roads (the votes cursor and signed deliveries).
 *
 * **The guarantee.** Every vote reaches every hook at least once. A hook sees a key a second time
 * only if the process died (or was stopped past its deadline while the hook ignored the abort
 * signal) between that hook's success and the durable record of it. Every call carries the vote
 * key as `idempotencyKey`, so a reward can be made idempotent downstream. A key seen before, on
 * either road, is not fired again while the ledger keeps it (until `expiresAt` plus
 * `votes.keepKeysFor`). Hooks that gave up after their retries leave a dead letter instead, which
 * {@link VotePipeline.retry} replays.
 */
export interface VotePipeline {
  /** Opens the ledger and re-runs the unfinished hooks of every pending vote (crash recovery). */
  start(): Promise<void>;
  /**
   * Records the new votes of a batch as pending, durably, then resolves; their hooks run in the
   * background, after this resolves (a webhook receiver answers 2xx at once). Each new vote is
   * logged at `info` (`vote received`, with `details.traceId`), and again once every hook
   * succeeded (`vote rewarded`), within the limits of `voteLog`. Rejects, recording
   * nothing it cannot stand behind, when the pipeline is not running or the ledger cannot write.
   */
  ingest(votes: readonly Vote[], road: Vote['road'], details?: IngestDetails): Promise<IngestResult>;
  /**
   * Takes no new work, lets hook calls in flight finish until `deadline` (epoch ms), then aborts
   * the rest. Unfinished votes stay pending in the ledger and re-run at the next `start()`. Does
   * not close the ledger.
   */
  stop(deadline: number): Promise<void>;
  /** The dead letters: votes a hook gave up on. */
  failed(): Promise<DeadLetter[]>;
  /**
   * Takes the matching dead letters (of configured hooks only) and runs those hooks again, with
   * fresh retries; resolves with how many were taken. Unknown `hook` names throw.
   */
  retry(filter?: { keys?: readonly string[]; hook?: string }): Promise<number>;
  /** Resolves when no vote has hooks left to run or record (for tests, benchmarks, the CLI). */
  idle(): Promise<void>;
  /** Votes with hooks outstanding, calls running, calls waiting for a slot, retries waiting. */
  stats(): { votes: number; running: number; waiting: number; retrying: number };
  /** `stop()` with a 10 s deadline. */
  [Symbol.asyncDispose](): Promise<void>;
}
