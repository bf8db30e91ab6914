import { setMaxListeners } from 'node:events';
import { ListingAgentError } from '../errors.js';
import { unrefDelay, type Delay } from '../contract/timer-delay.js';
import type { AgentLogger } from '../log/agent-logger.js';
import type { AgentMetrics } from '../runtime/metrics.js';
import type { IngestDetails, IngestResult } from '../runtime/votes.js';
import {
  checkIdle,
  drain,
  recover,
  releaseDrained,
  resume,
  scheduleCompaction,
  startJob,
  type PipelineRun,
  type VotePipelineEmit,
} from './pipeline-run.js';
import { confirmIngested, createPipelineState, holdsCaller, notRunning, onRoad, type BackoffOptions } from './pipeline-state.js';
import type { DeadLetter, LedgerEntry, Vote, VoteHook, VoteLedger } from './types.js';
import { createVoteLog } from './vote-log.js';
import { createRecordFailureLog } from './record-failures.js';

export type { BackoffOptions } from './pipeline-state.js';
export type { VotePipelineEmit } from './pipeline-run.js';
export type { IngestResult } from '../runtime/votes.js';

/*
 * The pipeline's options, its shape and its life (start, ingest, stop, retry) over one state
 * object; its scheduling decisions are pure functions in `pipeline-state.ts`, its hook calls and
 * their records in `pipeline-run.ts`.
 */

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
  schedule?: Delay;
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

/**
 * Creates the vote pipeline shared by the votes poller and the webhook receiver: it dedupes votes
 * by key against the ledger, records new ones as pending durably, then runs every reward hook for
 * each in the background, retrying failures, and records each success, each give-up (a dead
 * letter) and each finished vote.
 *
 * **The guarantee.** Every vote reaches every hook at least once. A hook sees a key a second time
 * only if the process died between that hook's success and the durable record of it (or the agent
 * was stopped past its deadline while the hook, ignoring its abort signal, had succeeded). Every
 * hook call carries the vote key as `idempotencyKey`, so the reward can be made idempotent
 * downstream. A key seen before, on either road, is not fired again while the ledger keeps it
 * (until its `expiresAt` plus `votes.keepKeysFor`).
 *
 * Scheduling: at most `concurrency` (default 16) hook calls run at once over all hooks; for each
 * hook, one user's votes are called in the order they were recorded. A failed call is retried
 * `hook.retries` times with exponential backoff and full jitter (`backoff`, default 1 s doubling
 * up to 5 min); a retry waiting for its delay holds that user's later votes for that hook, but no
 * slot. The ledger is compacted every `compactEveryMs` (default 5 min) while running.
 */
export function createVotePipeline(options: VotePipelineOptions): VotePipeline {
  const s = pipelineRun(options);
  const pipeline: VotePipeline = {
    start: () => start(s),
    ingest: (votes, road, details) => ingest(s, votes, road, details),
    stop: (deadline) => stop(s, deadline),
    failed: () => s.ledger.deadLetters(),
    retry: (filter = {}) => retry(s, filter),
    idle() {
      if (s.jobs.size === 0 && s.inFlight === 0) return Promise.resolve();
      return new Promise<void>((resolve) => s.idleWaiters.push(resolve));
    },
    stats: () => ({ votes: s.jobs.size, running: s.running, waiting: s.ready.length, retrying: s.retryTimers.size }),
    [Symbol.asyncDispose]: () => pipeline.stop(s.now() + 10_000),
  };
  return pipeline;
}

function pipelineRun(options: VotePipelineOptions): PipelineRun {
  const { ledger, logger, now } = options;
  const schedule = options.schedule ?? unrefDelay;
  const s: PipelineRun = {
    ...createPipelineState(options.hooks, { concurrency: options.concurrency, maxBacklog: options.maxBacklog }),
    ledger,
    logger,
    metrics: options.metrics,
    now,
    emit: options.emit,
    onFinished: options.onFinished,
    random: options.random ?? Math.random,
    backoff: options.backoff,
    schedule,
    compactEveryMs: options.compactEveryMs ?? 300_000,
    voteLog: createVoteLog({ logger, now, schedule, ...options.voteLog }),
    recordFailures: createRecordFailureLog({ logger, now, schedule }),
    retryTimers: new Set(),
    aborter: runAborter(),
    inFlight: 0,
    completing: new Set(),
    settleWaiters: [],
    idleWaiters: [],
    drainWaiters: [],
    pumpDue: false,
    cancelCompaction: undefined,
    starting: undefined,
    stopping: undefined,
    recovering: false,
  };
  return s;
}

/** The abort controller of one run: every hook call of the run holds its signal, and may listen to it. */
function runAborter(): AbortController {
  const aborter = new AbortController();
  // As many calls as `concurrency` may listen at once (the exec hook does): no leak warning for that.
  setMaxListeners(0, aborter.signal);
  return aborter;
}

/** Opens the ledger and re-runs the unfinished hooks of every pending vote. */
function start(s: PipelineRun): Promise<void> {
  if (s.phase === 'running') return Promise.resolve();
  s.starting ??= (async () => {
    if (s.stopping !== undefined) await s.stopping;
    s.phase = 'starting';
    let pending: LedgerEntry[];
    try {
      pending = await s.ledger.open();
    } catch (error) {
      s.phase = 'stopped';
      throw error;
    }
    for (const warning of s.ledger.warnings?.() ?? []) s.logger.warn({ ledger: s.ledger.describe() }, warning);
    s.generation += 1;
    s.running = 0;
    if (s.aborter.signal.aborted) s.aborter = runAborter();
    s.unconfirmed.clear();
    s.phase = 'running';
    for (const entry of pending) resume(s, entry);
    if (pending.length > 0) s.logger.info({ votes: pending.length }, 'resuming votes left pending by the last run');
    if (!s.recovering && s.ledger.onRecovered !== undefined) {
      s.recovering = true;
      s.ledger.onRecovered((entries) => recover(s, entries));
    }
    scheduleCompaction(s);
  })().finally(() => (s.starting = undefined));
  return s.starting;
}

async function ingest(s: PipelineRun, votes: readonly Vote[], road: Vote['road'], details?: IngestDetails): Promise<IngestResult> {
  if (s.phase !== 'running') throw notRunning('ingest votes');
  s.metrics?.votesReceived.inc({ road }, votes.length);
  const marked = onRoad(votes, road);
  const unknown = marked.filter((vote) => !s.ledger.has(vote.key));
  let accepted: Vote[];
  try {
    accepted = await s.ledger.recordPending(marked);
  } catch (error) {
    if (s.ledger.recoversLostRecords !== true) for (const vote of unknown) s.unconfirmed.set(vote.key, vote);
    throw error;
  }
  const confirmed = confirmIngested(s, marked, accepted);
  for (const vote of confirmed) {
    s.voteLog.received(vote, details?.traceId);
    s.emit?.('voteReceived', vote);
  }
  // After a stop the votes are pending in the ledger: the next start runs them.
  if (s.phase === 'running') for (const vote of confirmed) if (!recoveredMeanwhile(s, vote.key)) startJob(s, vote, s.hookNames, false);
  // The votes are durable already; holding the poller only bounds what waits in memory.
  if (holdsCaller(s, road)) await new Promise<void>((resolve) => s.drainWaiters.push(resolve));
  return { accepted, duplicates: votes.length - accepted.length };
}

/**
 * A vote this ingest recorded that runs here already: the ledger's sweep claimed the record this
 * very call made (the key was one whose earlier record was uncertain) and handed it over while the
 * call waited for its confirmation. A second job would call each hook again, after the first.
 */
function recoveredMeanwhile(s: PipelineRun, key: string): boolean {
  const job = s.jobs.get(key);
  return s.completing.has(key) || (job !== undefined && job.letGo.size === 0);
}

/** Takes no new work, lets the calls in flight finish until `deadline`, then aborts the rest. */
async function stop(s: PipelineRun, deadline: number): Promise<void> {
  if (s.starting !== undefined) await s.starting.catch(() => undefined);
  if (s.phase !== 'running') return s.stopping ?? Promise.resolve();
  s.phase = 'stopping';
  // A held poller goes on (its votes are durable; the next start runs their hooks).
  releaseDrained(s);
  s.cancelCompaction?.();
  s.voteLog.flush();
  for (const cancel of s.retryTimers) cancel();
  s.retryTimers.clear();
  s.ready.clear();
  for (const users of s.lanes.values()) users.clear();
  s.stopping = drain(s, deadline).finally(() => {
    s.recordFailures.flush();
    s.jobs.clear();
    s.phase = 'stopped';
    s.stopping = undefined;
    checkIdle(s);
  });
  return s.stopping;
}

/** Takes the matching dead letters (of configured hooks only) and runs those hooks again. */
async function retry(s: PipelineRun, filter: { keys?: readonly string[]; hook?: string }): Promise<number> {
  if (s.phase !== 'running') throw notRunning('retry dead letters');
  if (filter.hook !== undefined && !s.hooks.has(filter.hook)) {
    const known = [...s.hooks.keys()].join(', ') || '(none)';
    throw new ListingAgentError('votes_unknown_hook', `no vote hook is named "${filter.hook}"; the hooks are: ${known}`);
  }
  const names = filter.hook === undefined ? [...s.hooks.keys()] : [filter.hook];
  const taken: DeadLetter[] = [];
  const keys = filter.keys === undefined ? {} : { keys: filter.keys };
  for (const hook of names) taken.push(...(await s.ledger.takeDeadLetters({ ...keys, hook })));
  // Taken letters are pending again in the ledger: a crash from here on re-runs them at start.
  if (s.phase === 'running') for (const letter of taken) startJob(s, letter.vote, [letter.hook], true);
  return taken.length;
}
