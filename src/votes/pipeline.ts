import { setMaxListeners } from 'node:events';
import { ListingAgentError } from '../errors.js';
import { ChurnSet } from '../runtime/churn-map.js';
import { notRunning, realSchedule } from './pipeline-parts.js';
import { checkIdle, drain, pump, pumpAfterWriteStage, recover, releaseDrained, resume, scheduleCompaction, startJob, type PipelineRun } from './pipeline-run.js';
import { confirmIngested, createPipelineState, holdsCaller, onRoad } from './pipeline-state.js';
import type { IngestDetails, IngestResult, VotePipeline, VotePipelineOptions } from './pipeline-types.js';
import type { DeadLetter, LedgerEntry, Vote } from './types.js';
import { createVoteLog } from './vote-log.js';
import { createRecordFailureLog } from './record-failures.js';

export { type BackoffOptions, type Schedule } from './pipeline-parts.js';
export type { IngestResult, VotePipeline, VotePipelineEmit, VotePipelineOptions } from './pipeline-types.js';

/*
 * The pipeline's life (start, ingest, stop, retry) over one state object; its scheduling
 * decisions are pure functions in `pipeline-state.ts`, its hook calls and their records in
 * `pipeline-run.ts`.
 */

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
      if (s.jobs.size === 0 && s.inFlight.size === 0) return Promise.resolve();
      return new Promise<void>((resolve) => s.idleWaiters.push(resolve));
    },
    stats: () => ({ votes: s.jobs.size, running: s.running, waiting: s.ready.length, retrying: s.retryTimers.size }),
    [Symbol.asyncDispose]: () => pipeline.stop(s.now() + 10_000),
  };
  return pipeline;
}

function pipelineRun(options: VotePipelineOptions): PipelineRun {
  const { ledger, logger, now } = options;
  const schedule = options.schedule ?? realSchedule;
  const pumpNow = () => {
    s.kicked = false;
    pump(s);
  };
  const pumpAfterStage = () => pumpAfterWriteStage(s, pumpNow);
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
    finishing: undefined,
    inFlight: new ChurnSet(),
    idleWaiters: [],
    drainWaiters: [],
    kicked: false,
    // Two check phases on, and after the ledger's write stage: see `kick`.
    pumpSoon: () => void setImmediate(pumpAfterStage),
    kickedNext: false,
    pumpNext: () => {
      s.kickedNext = false;
      pump(s);
    },
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

async function ingest(s: PipelineRun, votes: readonly Vote[], road: Vote['road'], details: IngestDetails | undefined): Promise<IngestResult> {
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
  if (s.phase === 'running') for (const vote of confirmed) startJob(s, vote, s.hookNames, false);
  // The votes are durable already; holding the poller only bounds what waits in memory.
  if (holdsCaller(s, road)) await new Promise<void>((resolve) => s.drainWaiters.push(resolve));
  return { accepted, duplicates: votes.length - accepted.length };
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
    throw new ListingAgentError('votes_unknown_hook', `no vote hook is named "${filter.hook}"; the hooks are: ${[...s.hooks.keys()].join(', ') || '(none)'}`);
  }
  const names = filter.hook === undefined ? [...s.hooks.keys()] : [filter.hook];
  const taken: DeadLetter[] = [];
  for (const hook of names) taken.push(...(await s.ledger.takeDeadLetters({ ...(filter.keys === undefined ? {} : { keys: filter.keys }), hook })));
  // Taken letters are pending again in the ledger: a crash from here on re-runs them at start.
  if (s.phase === 'running') for (const letter of taken) startJob(s, letter.vote, [letter.hook], true);
  return taken.length;
}
