import { ListingAgentError } from '../errors.js';
import type { AgentLogger } from '../log/agent-logger.js';
import type { Delay } from '../contract/timer-delay.js';
import type { AgentMetrics } from '../runtime/metrics.js';
import {
  addJob,
  advanceLane,
  backlogDrained,
  backoffDelay,
  completesVote,
  deadLetterOf,
  removeJob,
  clippedErrorMessage,
  failureAction,
  hookDone,
  isCurrent,
  resumeOf,
  type BackoffOptions,
  type Job,
  type PipelineState,
  type Task,
} from './pipeline-state.js';
import type { HookCallContext, HookRun, LedgerEntry, Vote, VoteLedger, VotesEvents } from './types.js';
import type { VoteLog } from './vote-log.js';
import type { RecordFailureLog } from './record-failures.js';

/**
 * The vote pipeline's I/O around its decisions (`pipeline-state.ts`): hook calls, the ledger's
 * records of them, retry timers, logs. Every function takes the pipeline's one state object.
 */

/**
 * Resolves true once no work is in flight (work added meanwhile is waited for too), false if
 * `delayMs` passed on the pipeline's timer first.
 */
function settledWithin(s: PipelineRun, delayMs: number): Promise<boolean> {
  if (s.inFlight === 0) return Promise.resolve(true);
  return new Promise<boolean>((resolve) => {
    const settled = () => {
      cancel();
      resolve(true);
    };
    const cancel = s.schedule(() => {
      s.settleWaiters = s.settleWaiters.filter((waiter) => waiter !== settled);
      resolve(false);
    }, delayMs);
    s.settleWaiters.push(settled);
  });
}

/** The events the pipeline emits (the agent's `emit` fits). */
export type VotePipelineEmit = <K extends 'voteReceived' | 'voteDeadLettered' | 'voteHookRan'>(event: K, ...args: VotesEvents[K]) => void;

/** The whole state of a pipeline: its scheduling state and the I/O it drives. */
export interface PipelineRun extends PipelineState {
  readonly ledger: VoteLedger;
  readonly logger: AgentLogger;
  readonly metrics: Pick<AgentMetrics, 'votesReceived' | 'hookRuns'> | undefined;
  readonly now: () => number;
  readonly emit: VotePipelineEmit | undefined;
  readonly onFinished: ((vote: Vote, gaveUp: boolean) => void) | undefined;
  readonly random: () => number;
  readonly backoff: BackoffOptions | undefined;
  readonly schedule: Delay;
  readonly compactEveryMs: number;
  readonly voteLog: VoteLog;
  /** The `warn` lines of records that could not be written (summarised on a full disk). */
  readonly recordFailures: RecordFailureLog;
  readonly retryTimers: Set<() => void>;
  /**
   * The abort signal of every hook call of this run (one per start): aborted once a stop passes
   * its deadline, which aborts every call still running.
   */
  aborter: AbortController;
  /**
   * Hook calls and ledger writes in flight: what `stop()` waits for and `idle()` watches. A count:
   * nothing needs the work itself, and a Set of it would be filled and emptied by every vote.
   */
  inFlight: number;
  /**
   * Votes whose hooks ran here and whose `complete` the ledger has not yet made durable (Redis
   * refusing writes keeps it queued). Redis still shows such a vote pending under this agent, so
   * a sweep may hand it back: it is not run again (its job is gone, but its reward was paid).
   */
  readonly completing: Set<string>;
  /** Woken when nothing is in flight any more (`stop()`'s wait). */
  settleWaiters: Array<() => void>;
  idleWaiters: Array<() => void>;
  /** Pollers held until the backlog is down to half of `maxBacklog`. */
  drainWaiters: Array<() => void>;
  /** A {@link pumpSoon} is due. */
  pumpDue: boolean;
  cancelCompaction: (() => void) | undefined;
  starting: Promise<void> | undefined;
  stopping: Promise<void> | undefined;
  /** Subscribed to the ledger's recovered votes (once: the listener checks the phase). */
  recovering: boolean;
}

export function checkIdle(s: PipelineRun): void {
  if (s.idleWaiters.length === 0 || s.jobs.size > 0 || s.inFlight > 0) return;
  const waiters = s.idleWaiters;
  s.idleWaiters = [];
  for (const resolve of waiters) resolve();
}

export function releaseDrained(s: PipelineRun): void {
  if (s.drainWaiters.length === 0 || !backlogDrained(s)) return;
  const waiting = s.drainWaiters;
  s.drainWaiters = [];
  for (const wake of waiting) wake();
}

/** Runs `work` in the background; it must not reject (callers catch). */
function track(s: PipelineRun, work: Promise<unknown>): void {
  s.inFlight += 1;
  void work.finally(() => {
    s.inFlight -= 1;
    if (s.inFlight === 0 && s.settleWaiters.length > 0) {
      const waiters = s.settleWaiters;
      s.settleWaiters = [];
      for (const settled of waiters) settled();
    }
    checkIdle(s);
  });
}

/**
 * Pumps once the caller that added work has gone on: in the next check phase of the event loop
 * (`setImmediate`), so that an `ingest()` caller has its answer first (a webhook answers 204, a
 * poller stores its cursor), the same for both roads. Several calls in one turn pump once.
 */
function pumpSoon(s: PipelineRun): void {
  if (s.pumpDue) return;
  s.pumpDue = true;
  setImmediate(() => {
    s.pumpDue = false;
    pump(s);
  });
}

function pump(s: PipelineRun): void {
  while (s.phase === 'running' && s.running < s.concurrency && s.ready.length > 0) {
    const task = s.ready.shift();
    if (task === undefined) break;
    s.running += 1;
    track(s, call(s, task));
  }
}

/** {@link addJob}, with a pump of the tasks it readied and the record of a job left with nothing to do. */
export function startJob(s: PipelineRun, vote: Vote, wanted: readonly string[], recordEachHook: boolean, gaveUp = false): void {
  const readyBefore = s.ready.length;
  const job = addJob(s, vote, wanted, recordEachHook, gaveUp);
  if (s.ready.length > readyBefore) pumpSoon(s);
  if (job.outstanding === 0) finishJob(s, job);
}

/** Runs the hooks of a pending entry that are not done yet. */
export function resume(s: PipelineRun, entry: LedgerEntry): void {
  const { names, gaveUp } = resumeOf(s, entry);
  startJob(s, entry.vote, names, gaveUp, gaveUp);
}

function finishJob(s: PipelineRun, job: Job): void {
  removeJob(s, job.vote.key);
  releaseDrained(s);
  if (job.letGo.size > 0) {
    // The agent that holds the vote now records its finish; a record here would end its entry early.
    checkIdle(s);
    return;
  }
  // A failed record stays queued in the ledger and goes with its next write, or at the stop; the
  // ledger's close names what is still unwritten then.
  const { key } = job.vote;
  s.completing.add(key);
  const recorded = s.ledger.recordComplete(key).catch((error: unknown) => s.recordFailures.failed('finished', key, undefined, error));
  track(s, recorded.finally(() => s.completing.delete(key)));
}

function hookFinished(s: PipelineRun, task: Task): void {
  if (!hookDone(s, task)) return;
  if (task.job.letGo.size === 0) {
    if (!task.job.gaveUp) s.voteLog.rewarded(task.job.vote, s.hookNames);
    s.onFinished?.(task.job.vote, task.job.gaveUp);
  }
  finishJob(s, task.job);
}

/** One hook call for one vote, then what its outcome calls for. */
async function call(s: PipelineRun, task: Task): Promise<void> {
  const context: HookCallContext = { idempotencyKey: task.job.vote.key, attempt: task.attempt, signal: s.aborter.signal };
  let failure: unknown;
  let ok = false;
  const startedAt = s.now();
  try {
    await task.hook.run(task.job.vote, context);
    ok = true;
  } catch (error) {
    failure = error;
  } finally {
    if (isCurrent(s, task)) s.running -= 1;
  }
  const durationMs = s.now() - startedAt;
  // Resolves once what the outcome asked of the ledger is recorded (undefined: nothing asked).
  await (ok ? succeeded(s, task, durationMs) : failed(s, task, failure, durationMs));
}

/** Tells the agent how one call went (`voteHookRan`: the status page's outcome and latency per hook). */
function ran(s: PipelineRun, task: Task, result: HookRun['result'], durationMs: number, error?: string): void {
  const run: HookRun = { key: task.job.vote.key, hook: task.hook.name, attempt: task.attempt, result, durationMs };
  s.emit?.('voteHookRan', error === undefined ? run : { ...run, error });
}

/** After a success: the lane goes on, and the success is recorded (resolves once it is; undefined: nothing to wait for). */
function succeeded(s: PipelineRun, task: Task, durationMs: number): Promise<void> | undefined {
  const { hook, job } = task;
  s.metrics?.hookRuns.inc({ hook: hook.name, result: 'ok' });
  ran(s, task, 'ok', durationMs);
  advanceLane(s, task);
  pump(s);
  if (completesVote(s, task)) {
    hookFinished(s, task); // the last hook: `complete` records its success
    return undefined;
  }
  // Recorded even after a stop: a success known to the ledger is one call fewer next start.
  return s.ledger.recordHookDone(job.vote.key, hook.name).then(
    () => hookFinished(s, task),
    (error: unknown) => {
      s.recordFailures.failed('hook', job.vote.key, hook.name, error);
      // Completing is still right: the hook did succeed, and `complete` says so too.
      hookFinished(s, task);
    },
  );
}

/** After a failure: a retry later, or a dead letter (resolves once it is recorded). */
function failed(s: PipelineRun, task: Task, failure: unknown, durationMs: number): Promise<void> | undefined {
  const action = failureAction(s, task);
  if (action === 'abandon') return undefined; // stopped: the vote stays pending and this hook re-runs next start
  const { hook, job } = task;
  if (action === 'retry') {
    pump(s); // its slot is free; the lane waits for the retry
    s.metrics?.hookRuns.inc({ hook: hook.name, result: 'error' });
    ran(s, task, 'error', durationMs, clippedErrorMessage(failure));
    const delayMs = backoffDelay(task.attempt, s.random, s.backoff);
    const fields = { hook: hook.name, key: job.vote.key, attempt: task.attempt, retryInMs: delayMs, error: clippedErrorMessage(failure) };
    s.logger.warn(fields, 'vote hook failed; retrying');
    const cancel = s.schedule(() => {
      s.retryTimers.delete(cancel);
      retryIfHeld(s, task);
    }, delayMs);
    s.retryTimers.add(cancel);
    return undefined;
  }
  s.metrics?.hookRuns.inc({ hook: hook.name, result: 'dead_letter' });
  const letter = deadLetterOf(task, failure, s.now());
  ran(s, task, 'dead_letter', durationMs, letter.error);
  s.logger.error(
    { hook: hook.name, key: job.vote.key, attempts: task.attempt, error: letter.error },
    'vote hook gave up; dead-lettered (listing-agent votes failed lists it, votes retry replays it)',
  );
  advanceLane(s, task);
  pump(s);
  job.recordEachHook = true;
  job.gaveUp = true;
  return s.ledger.recordDeadLetter(letter).then(
    () => {
      s.emit?.('voteDeadLettered', letter);
      hookFinished(s, task);
    },
    (error: unknown) => {
      const message = 'could not record a dead letter; the vote stays pending and its hook re-runs after a restart';
      s.logger.error({ hook: hook.name, key: job.vote.key, err: error }, message);
      // Never `complete` without the dead letter on record: that would lose the vote for this hook.
      if (isCurrent(s, task) && s.jobs.get(job.vote.key) === job) {
        removeJob(s, job.vote.key);
        releaseDrained(s);
      }
    },
  );
}

/**
 * A retry is due: it runs unless the ledger says another agent holds the vote now. That happens
 * to an agent frozen (a paused VM, a stopped process) past its lease with this hook's call in
 * flight: another agent's sweep took the vote over and ran it; the call here, thawed, timed out.
 * Its repeat was the call in flight; a retry here would be a third reward.
 */
function retryIfHeld(s: PipelineRun, task: Task): void {
  // A job that dead-lettered a hook keeps its retries: a replay of that letter (`votes retry`)
  // makes the vote pending under the replaying agent, which runs that one hook, not this one.
  if (s.ledger.holds === undefined || task.job.gaveUp) return requeue(s, task);
  const asked = s.ledger.holds(task.job.vote.key).catch(() => true);
  track(
    s,
    asked.then((held) => {
      // Stopped meanwhile: the vote stays pending and this hook re-runs at the next start.
      if (!isCurrent(s, task) || s.phase !== 'running') return;
      if (held) requeue(s, task);
      else letGo(s, task);
    }),
  );
}

function requeue(s: PipelineRun, task: Task): void {
  task.attempt += 1;
  s.ready.push(task);
  pump(s);
}

/**
 * Ends this hook's part of the job without a call or a record, as a success would end it: the
 * agent holding the vote runs it, records it, dead-letters it if it must.
 */
function letGo(s: PipelineRun, task: Task): void {
  const { hook, job } = task;
  const message = 'vote hook not retried: another agent took the vote over while this call was in flight, and finished it or runs it';
  s.logger.info({ hook: hook.name, key: job.vote.key, attempts: task.attempt }, message);
  job.letGo.add(hook.name);
  // No `complete` from this job now: the hooks still running here record their own success.
  job.recordEachHook = true;
  advanceLane(s, task);
  pump(s);
  hookFinished(s, task);
}

/**
 * Votes the ledger took over from a stopped agent (a shared ledger's `onRecovered`): run like
 * the pending votes of a start. A key already running here is skipped; one from a failed batch
 * is confirmed now, so a retried delivery of it is a plain duplicate.
 */
export function recover(s: PipelineRun, entries: readonly LedgerEntry[]): void {
  // Not running: they stay pending under this agent, for its next start or the agent taking over.
  if (s.phase !== 'running') return;
  let resumed = 0;
  for (const entry of entries) {
    s.unconfirmed.delete(entry.vote.key);
    const job = s.jobs.get(entry.vote.key);
    // Rewarded here, its completion not yet durable: a second call would be a repeat outside any call in flight.
    if (s.completing.has(entry.vote.key)) continue;
    if (job === undefined) resume(s, entry);
    else if (job.letGo.size > 0) takeBack(s, job, entry);
    else continue;
    resumed += 1;
  }
  if (resumed > 0) s.logger.info({ votes: resumed }, 'resuming votes left pending by an agent that stopped');
}

/**
 * A vote whose retry was let go here came back (the agent that held it stopped, and this one's
 * sweep took it): the hooks let go that it has not done run here again, and this job, the
 * holder's again, records the vote's finish. The hooks still running here are not added twice.
 */
function takeBack(s: PipelineRun, job: Job, entry: LedgerEntry): void {
  const again = resumeOf(s, entry).names.filter((name) => job.letGo.has(name));
  job.letGo.clear();
  startJob(s, entry.vote, again, true);
}

export function scheduleCompaction(s: PipelineRun): void {
  // One timer, however the runs and restarts interleave.
  s.cancelCompaction?.();
  s.cancelCompaction = s.schedule(() => {
    if (s.phase !== 'running') return;
    track(
      s,
      s.ledger
        .compact(s.now())
        .catch((error: unknown) => s.logger.warn({ err: error }, 'could not compact the vote ledger; trying again later'))
        .finally(() => {
          if (s.phase === 'running') scheduleCompaction(s);
        }),
    );
  }, s.compactEveryMs);
}

/** Waits for the work in flight until `deadline`, then aborts the hook calls still running. */
export async function drain(s: PipelineRun, deadline: number): Promise<void> {
  if (await settledWithin(s, deadline - s.now())) return;
  const running = s.running;
  s.aborter.abort(new ListingAgentError('votes_stopped', 'the agent is stopping: the stop deadline passed'));
  const message = 'stop deadline reached: aborted vote hooks still running; their votes stay pending and re-run at the next start';
  s.logger.warn({ aborted: running }, message);
}
