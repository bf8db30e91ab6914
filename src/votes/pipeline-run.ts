import { ListingAgentError } from '../errors.js';
import type { ChurnSet } from '../runtime/churn-map.js';
import type { AgentLogger } from '../log/agent-logger.js';
import { backoffDelay, errorText, settleWithin, type BackoffOptions, type Job, type Schedule, type Task } from './pipeline-parts.js';
import {
  addJob,
  advanceLane,
  backlogDrained,
  completesVote,
  deadLetterOf,
  failureAction,
  hookDone,
  isCurrent,
  resumeOf,
  type PipelineState,
} from './pipeline-state.js';
import type { VotePipelineEmit, VotePipelineOptions } from './pipeline-types.js';
import type { HookCallContext, HookRun, LedgerEntry, Vote, VoteLedger } from './types.js';
import type { VoteLog } from './vote-log.js';
import type { RecordFailureLog } from './record-failures.js';

/**
 * The vote pipeline's I/O around its decisions (`pipeline-state.ts`): hook calls, the ledger's
 * records of them, retry timers, logs. Every function takes the pipeline's one state object.
 */

/** The whole state of a pipeline: its scheduling state and the I/O it drives. */
export interface PipelineRun extends PipelineState {
  readonly ledger: VoteLedger;
  readonly logger: AgentLogger;
  readonly metrics: VotePipelineOptions['metrics'];
  readonly now: () => number;
  readonly emit: VotePipelineEmit | undefined;
  readonly onFinished: VotePipelineOptions['onFinished'];
  readonly random: () => number;
  readonly backoff: BackoffOptions | undefined;
  readonly schedule: Schedule;
  readonly compactEveryMs: number;
  readonly voteLog: VoteLog;
  /** The `warn` lines of records that could not be written (summarised on a full disk). */
  readonly recordFailures: RecordFailureLog;
  readonly retryTimers: Set<() => void>;
  /**
   * The abort signal of every hook call of this run (one per start, not one per call: an
   * `AbortController` per call cost about 1 KiB and 1-2 µs per vote, and the in-process hook reads
   * `signal.aborted` first thing). Aborted once a stop passes its deadline, which aborts every call
   * still running, as one signal per call did.
   */
  aborter: AbortController;
  /** The last `complete` records asked of the ledger: its promise (shared by one write's records) and their keys. */
  finishing: { recorded: Promise<void>; keys: string[] } | undefined;
  /** Hook calls and ledger writes in flight: what `stop()` waits for and `idle()` watches. */
  readonly inFlight: ChurnSet<Promise<unknown>>;
  idleWaiters: Array<() => void>;
  /** Pollers held until the backlog is down to half of `maxBacklog`. */
  drainWaiters: Array<() => void>;
  kicked: boolean;
  /** {@link pump} two check phases on and after the ledger's write stage (see `kick`), made once. */
  readonly pumpSoon: () => void;
  /** A pump in the next check phase is due (a vote that did not come by the poller: see `kick`). */
  kickedNext: boolean;
  /** {@link pump} in the next check phase, made once. */
  readonly pumpNext: () => void;
  cancelCompaction: (() => void) | undefined;
  starting: Promise<void> | undefined;
  stopping: Promise<void> | undefined;
  /** Subscribed to the ledger's recovered votes (once: the listener checks the phase). */
  recovering: boolean;
}

export function checkIdle(s: PipelineRun): void {
  if (s.idleWaiters.length === 0 || s.jobs.size > 0 || s.inFlight.size > 0) return;
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
  s.inFlight.add(work);
  void work.finally(() => {
    s.inFlight.delete(work);
    checkIdle(s);
  });
}

/**
 * Pumps in the next check phase of the event loop but one, and then once the ledger's append
 * under way has started its fsync ({@link pumpAfterWriteStage}); not in a microtask nor in the
 * next check phase: `ingest()` callers go first (a webhook answering 2xx, a poller handing over its
 * next page), and so does the group commit their changes asked for, which the ledger starts in the
 * next check phase (`createCommitter`). The hooks of the votes just made durable then take the
 * main thread during the next write's fsync, not before the write starts nor while it is handed
 * over, which would hold up the fsync's start (a poller's pages of 100: about 1.15x the votes/s,
 * see BENCHMARKS.md). Their `complete` records go with the commit after, as those of a hook that
 * ends during an fsync always did. That is for the poller's votes, whose reward waits for a
 * poll anyway: the hooks of any other vote (a webhook's, a stream's) are pumped in the next check
 * phase, as soon as their caller has its answer, since waiting for the next write put 10 to 12 ms
 * on a webhook's reward at p50 and 13 to 25 ms at p99 at 10,000 deliveries a second
 * (`bench:latency`, BENCHMARKS.md).
 */
function kick(s: PipelineRun, vote: Vote): void {
  if (vote.road !== 'poll') {
    if (s.kickedNext) return;
    s.kickedNext = true;
    setImmediate(s.pumpNext);
    return;
  }
  if (s.kicked) return;
  s.kicked = true;
  setImmediate(s.pumpSoon);
}

/** How long a pump waits at most for the ledger's append to start its fsync: a disk that hangs holds no hook up longer. */
const WRITE_STAGE_WAIT_MS = 10;

/** Calls `pumpNow` at once, or, while the ledger's append hands its data over, once its fsync has started (or {@link WRITE_STAGE_WAIT_MS} passed). */
export function pumpAfterWriteStage(s: PipelineRun, pumpNow: () => void): void {
  let cancel: (() => void) | undefined;
  let done = false;
  const once = () => {
    if (done) return;
    done = true;
    cancel?.();
    pumpNow();
  };
  if (s.ledger.afterWriteStage?.(once) === true) cancel = s.schedule(once, WRITE_STAGE_WAIT_MS);
  else once();
}

export function pump(s: PipelineRun): void {
  while (s.phase === 'running' && s.running < s.concurrency && s.ready.length > 0) {
    const task = s.ready.shift();
    if (task === undefined) break;
    s.running += 1;
    track(s, call(s, task));
  }
}

/** {@link addJob}, with the kick of the tasks it readied and the record of a job left with nothing to do. */
export function startJob(s: PipelineRun, vote: Vote, wanted: readonly string[], recordEachHook: boolean, gaveUp = false): void {
  const readyBefore = s.ready.length;
  const job = addJob(s, vote, wanted, recordEachHook, gaveUp);
  if (s.ready.length > readyBefore) kick(s, vote);
  if (job.outstanding === 0) finishJob(s, job);
}

/** Runs the hooks of a pending entry that are not done yet. */
export function resume(s: PipelineRun, entry: LedgerEntry): void {
  const { names, gaveUp } = resumeOf(s, entry);
  startJob(s, entry.vote, names, gaveUp, gaveUp);
}

function finishJob(s: PipelineRun, job: Job): void {
  s.jobs.delete(job.vote.key);
  releaseDrained(s);
  // A failed record stays queued in the ledger and goes with its next write, or at the stop; the ledger's close names what is still unwritten then.
  // The key alone is kept until the record is durable, not the job and its vote.
  const { key } = job.vote;
  const recorded = s.ledger.recordComplete(key);
  // A ledger with group commits answers the records of one write with one promise (the file
  // ledger): one catch and one tracking for all of them, not one each (about 500 bytes a vote).
  const batch = s.finishing;
  if (batch !== undefined && batch.recorded === recorded) {
    batch.keys.push(key);
    return;
  }
  const keys = [key];
  s.finishing = { recorded, keys };
  track(
    s,
    recorded.catch((error: unknown) => {
      for (const each of keys) s.recordFailures.failed('finished', each, undefined, error);
    }),
  );
}

function advance(s: PipelineRun, task: Task): void {
  if (advanceLane(s, task)) kick(s, task.job.vote);
}

function hookFinished(s: PipelineRun, task: Task): void {
  if (!hookDone(s, task)) return;
  if (!task.job.gaveUp) s.voteLog.rewarded(task.job.vote, s.hookNames);
  s.onFinished?.(task.job.vote, task.job.gaveUp);
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
  // Most calls end here, with no record to wait for: no promise of their own then.
  const recording = ok ? succeeded(s, task, durationMs) : failed(s, task, failure, durationMs);
  if (recording !== undefined) await recording;
}

/** Tells the agent how one call went (`voteHookRan`: the status page's outcome and latency per hook). */
function ran(s: PipelineRun, task: Task, result: HookRun['result'], durationMs: number, error?: string): void {
  s.emit?.('voteHookRan', { key: task.job.vote.key, hook: task.hook.name, attempt: task.attempt, result, durationMs, ...(error === undefined ? {} : { error }) });
}

/** After a success: the lane goes on, and the success is recorded (resolves once it is; undefined: nothing to wait for). */
function succeeded(s: PipelineRun, task: Task, durationMs: number): Promise<void> | undefined {
  const { hook, job } = task;
  s.metrics?.hookRuns.inc({ hook: hook.name, result: 'ok' });
  ran(s, task, 'ok', durationMs);
  advance(s, task);
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
  pump(s);
  const { hook, job } = task;
  if (action === 'retry') {
    s.metrics?.hookRuns.inc({ hook: hook.name, result: 'error' });
    ran(s, task, 'error', durationMs, errorText(failure));
    const delayMs = backoffDelay(task.attempt, s.random, s.backoff);
    s.logger.warn({ hook: hook.name, key: job.vote.key, attempt: task.attempt, retryInMs: delayMs, error: errorText(failure) }, 'vote hook failed; retrying');
    const cancel = s.schedule(() => {
      s.retryTimers.delete(cancel);
      task.attempt += 1;
      s.ready.push(task);
      pump(s);
    }, delayMs);
    s.retryTimers.add(cancel);
    return undefined;
  }
  s.metrics?.hookRuns.inc({ hook: hook.name, result: 'dead_letter' });
  const letter = deadLetterOf(task, failure, s.now());
  ran(s, task, 'dead_letter', durationMs, letter.error);
  s.logger.error({ hook: hook.name, key: job.vote.key, attempts: task.attempt, error: letter.error }, 'vote hook gave up; dead-lettered (listing-agent votes failed lists it, votes retry replays it)');
  advance(s, task);
  job.recordEachHook = true;
  job.gaveUp = true;
  return s.ledger.recordDeadLetter(letter).then(
    () => {
      s.emit?.('voteDeadLettered', letter);
      hookFinished(s, task);
    },
    (error: unknown) => {
      s.logger.error({ hook: hook.name, key: job.vote.key, err: error }, 'could not record a dead letter; the vote stays pending and its hook re-runs after a restart');
      // Never `complete` without the dead letter on record: that would lose the vote for this hook.
      if (isCurrent(s, task) && s.jobs.get(job.vote.key) === job) {
        s.jobs.delete(job.vote.key);
        releaseDrained(s);
      }
    },
  );
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
    if (s.jobs.has(entry.vote.key)) continue;
    resume(s, entry);
    resumed += 1;
  }
  if (resumed > 0) s.logger.info({ votes: resumed }, 'resuming votes left pending by an agent that stopped');
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
  if (await settleWithin(s.inFlight, deadline - s.now(), s.schedule)) return;
  const running = s.running;
  s.aborter.abort(new ListingAgentError('votes_stopped', 'the agent is stopping: the stop deadline passed'));
  s.logger.warn({ aborted: running }, 'stop deadline reached: aborted vote hooks still running; their votes stay pending and re-run at the next start');
}
