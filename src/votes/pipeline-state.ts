import { ListingAgentError } from '../errors.js';
import type { DeadLetter, LedgerEntry, Vote, VoteHook } from './types.js';
import { renewedWhenEmpty } from './ledger-state.js';

/**
 * The vote pipeline's decisions over a plain state object, with no I/O: which hook call runs next
 * (a lane per hook and user, a slot limit), when a vote is finished, what follows a hook's
 * success or failure, which votes of a batch are new, when the poller is held, how long a retry
 * waits. `pipeline.ts` and `pipeline-run.ts` do the I/O (the ledger, the hooks, timers, logs)
 * around these.
 */

/** A vote with hooks outstanding in this run of the pipeline. */
export interface Job {
  vote: Vote;
  outstanding: number;
  /**
   * Record each hook's success, also the last one's. Needed once the vote has a dead letter: its
   * entry then outlives `complete`, and a replay must know which hooks were done. Otherwise the
   * `complete` record says it for the last hook, one record per vote fewer.
   */
  recordEachHook: boolean;
  /** A hook gave up on it (now, or in an earlier run): it is not `vote rewarded` when its hooks are done. */
  gaveUp: boolean;
  /**
   * The hooks whose retry was let go: another agent holds the vote now (it took it over while a
   * call here was in flight). While any is, the job ends without a record of its finish (the
   * other agent writes it).
   */
  readonly letGo: Set<string>;
}

/** One hook for one vote; queued behind the same user's earlier votes for the same hook. */
export interface Task {
  job: Job;
  hook: VoteHook;
  attempt: number;
  generation: number;
}

/** A first-in first-out queue with O(1) `shift` (an array's `shift` copies what is behind the head). */
interface Fifo<T> {
  readonly length: number;
  push(item: T): void;
  shift(): T | undefined;
  clear(): void;
}

/** Creates an empty {@link Fifo}. */
function createFifo<T>(): Fifo<T> {
  let items: (T | undefined)[] = [];
  let head = 0;
  return {
    get length() {
      return items.length - head;
    },
    push(item) {
      items.push(item);
    },
    shift() {
      if (head >= items.length) return undefined;
      const item = items[head];
      items[head] = undefined;
      head += 1;
      // Drop the consumed front now and then, so the array does not grow without end.
      if (head > 1024 && head * 2 > items.length) {
        items = items.slice(head);
        head = 0;
      }
      return item;
    },
    clear() {
      items = [];
      head = 0;
    },
  };
}

/** Exponential backoff settings of hook retries. */
export interface BackoffOptions {
  /** The ceiling of the first retry's delay. Default 1000 ms. */
  baseMs?: number;
  /** The largest ceiling. Default 300 000 ms (5 min). */
  maxMs?: number;
}

/**
 * The delay before retry number `failedAttempt` (1 after the first failure): "full jitter", a
 * uniform pick in `[0, min(maxMs, baseMs * 2^(failedAttempt - 1)))`, so that many votes failing
 * together (a bot restarting) do not come back together.
 */
export function backoffDelay(failedAttempt: number, random: () => number, options: BackoffOptions = {}): number {
  const baseMs = options.baseMs ?? 1_000;
  const maxMs = options.maxMs ?? 300_000;
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.max(0, failedAttempt - 1));
  return Math.floor(random() * ceiling);
}

/**
 * `errorMessage` (errors.ts), clipped to 500 characters (an `Error` without a message gives its name): a
 * hook failure for logs and dead letters (the hook implementations keep secrets out).
 */
export function clippedErrorMessage(error: unknown): string {
  const text = error instanceof Error ? error.message || error.name : String(error);
  return text.length > 500 ? `${text.slice(0, 500)}...` : text;
}

/** The error of a call the pipeline cannot take (not started, or stopped). */
export const notRunning = (what: string) =>
  new ListingAgentError(
    'votes_not_running',
    `cannot ${what}: the vote pipeline is not running (call start() first; after stop() it takes no new votes)`,
  );

/** Where the pipeline is in its life. */
type PipelinePhase = 'new' | 'starting' | 'running' | 'stopping' | 'stopped';

/** The scheduling state of one pipeline. */
export interface PipelineState {
  phase: PipelinePhase;
  /** Bumped by every start: work of an earlier run must not touch this run's counters. */
  generation: number;
  /** The hooks by name, in their configured order. */
  readonly hooks: ReadonlyMap<string, VoteHook>;
  readonly hookNames: readonly string[];
  /** Hook calls in flight at once, over all hooks. */
  readonly concurrency: number;
  /** Votes waiting for their hooks before the poller is held. */
  readonly maxBacklog: number;
  /** Votes with hooks outstanding in this run, by key. */
  jobs: Map<string, Job>;
  /**
   * Per hook, per user: the tasks queued behind the one running or waiting (`null`: none behind).
   * A user has an entry while one of their tasks for that hook is active.
   */
  readonly lanes: Map<VoteHook, Map<string, Task[] | null>>;
  /** Tasks free to run, waiting for a slot. */
  readonly ready: Fifo<Task>;
  /** Hook calls running. */
  running: number;
  /**
   * Votes of a batch whose recording failed: the ledger may still write them (the file ledger
   * retries a failed append). When a later batch brings one again and the ledger then knows it,
   * it is durable by then, and its hooks run now rather than at the next start.
   */
  readonly unconfirmed: Map<string, Vote>;
}

/** What follows a failed hook call. */
export type FailureAction = 'abandon' | 'retry' | 'dead_letter';

/** The hooks by name; two with one name throw (names key the ledger's records). */
function hooksByName(hooks: readonly VoteHook[]): Map<string, VoteHook> {
  const byName = new Map<string, VoteHook>();
  for (const hook of hooks) {
    if (byName.has(hook.name)) {
      const message = `two vote hooks are named "${hook.name}": hook names must be unique (they key the ledger's records)`;
      throw new ListingAgentError('votes_hook_name', message);
    }
    byName.set(hook.name, hook);
  }
  return byName;
}

/** A new pipeline's state (`concurrency` default 16, at least 1; `maxBacklog` default 2000). */
export function createPipelineState(
  hooks: readonly VoteHook[],
  options: { concurrency?: number | undefined; maxBacklog?: number | undefined } = {},
): PipelineState {
  return {
    phase: 'new',
    generation: 0,
    hooks: hooksByName(hooks),
    hookNames: hooks.map((hook) => hook.name),
    concurrency: Math.max(1, options.concurrency ?? 16),
    maxBacklog: options.maxBacklog ?? 2_000,
    jobs: new Map(),
    lanes: new Map(hooks.map((hook) => [hook, new Map()])),
    ready: createFifo<Task>(),
    running: 0,
    unconfirmed: new Map(),
  };
}

/** Whether `task` belongs to the pipeline's current run. */
export const isCurrent = (state: PipelineState, task: Task): boolean => task.generation === state.generation;

/** Queues `hook` for `job`, behind the same user's earlier votes for that hook; true when it is ready to run now. */
function enqueue(state: PipelineState, job: Job, hook: VoteHook): boolean {
  const task: Task = { job, hook, attempt: 1, generation: state.generation };
  const users = state.lanes.get(hook) as Map<string, Task[] | null>;
  const { userId } = job.vote;
  if (!users.has(userId)) {
    users.set(userId, null);
    state.ready.push(task);
    return true;
  }
  const behind = users.get(userId);
  if (behind) behind.push(task);
  else users.set(userId, [task]);
  return false;
}

/** The lane's head is done (succeeded, dead-lettered or abandoned); true when its next task became ready. */
export function advanceLane(state: PipelineState, task: Task): boolean {
  if (!isCurrent(state, task)) return false;
  const users = state.lanes.get(task.hook) as Map<string, Task[] | null>;
  const { userId } = task.job.vote;
  const next = users.get(userId)?.shift();
  if (next === undefined) {
    users.delete(userId);
    state.lanes.set(task.hook, renewedWhenEmpty(users));
    return false;
  }
  state.ready.push(next);
  return true;
}

/**
 * Adds the `wanted` hooks (those configured) of a vote to its job, made if new, and queues them.
 * The job is finished at once when nothing is left of it (`outstanding` 0): the caller records that.
 */
export function addJob(state: PipelineState, vote: Vote, wanted: readonly string[], recordEachHook: boolean, gaveUp = false): Job {
  const names = wanted.filter((name) => state.hooks.has(name));
  let job = state.jobs.get(vote.key);
  if (job === undefined) {
    job = { vote, outstanding: 0, recordEachHook, gaveUp, letGo: new Set() };
    state.jobs.set(vote.key, job);
  }
  job.recordEachHook ||= recordEachHook;
  job.gaveUp ||= gaveUp;
  // A hook let go and added again (the vote came back to this agent) is this agent's to run again.
  for (const name of names) job.letGo.delete(name);
  job.outstanding += names.length;
  for (const name of names) enqueue(state, job, state.hooks.get(name) as VoteHook);
  return job;
}

/** The hooks of a pending entry still to run (neither done nor dead-lettered), and whether one gave up already. */
export function resumeOf(state: PipelineState, entry: LedgerEntry): { names: string[]; gaveUp: boolean } {
  const finished = new Set([...entry.done, ...(entry.deadLettered ?? [])]);
  return { names: [...state.hooks.keys()].filter((name) => !finished.has(name)), gaveUp: (entry.deadLettered ?? []).length > 0 };
}

/**
 * A hook of `task`'s vote is done (its success or dead letter recorded): true when it was the
 * vote's last, so the vote is finished. While stopping, calls that finish still count; after the
 * stop, or from an earlier run, nothing does.
 */
export function hookDone(state: PipelineState, task: Task): boolean {
  if (!isCurrent(state, task) || state.phase === 'stopped') return false;
  task.job.outstanding -= 1;
  return task.job.outstanding === 0 && state.jobs.get(task.job.vote.key) === task.job;
}

/**
 * After a success: whether the vote's `complete` record says it, one record fewer than a `hook
 * done` and a `complete` (the last hook of a vote that has no dead letter).
 */
export function completesVote(state: PipelineState, task: Task): boolean {
  return !task.job.recordEachHook && task.job.outstanding === 1 && isCurrent(state, task) && state.phase !== 'stopped';
}

/**
 * After a failure: `abandon` once the run it belongs to stopped (the vote stays pending, its hook
 * re-runs next start), `retry` while the hook has retries left, else `dead_letter`.
 */
export function failureAction(state: PipelineState, task: Task): FailureAction {
  if (!isCurrent(state, task) || state.phase !== 'running') return 'abandon';
  return task.attempt <= task.hook.retries ? 'retry' : 'dead_letter';
}

/** The dead letter of a hook that gave up on a vote. */
export function deadLetterOf(task: Task, failure: unknown, now: number): DeadLetter {
  const { vote } = task.job;
  const failedAt = new Date(now).toISOString();
  return { key: vote.key, hook: task.hook.name, vote, attempts: task.attempt, error: clippedErrorMessage(failure), failedAt };
}

/** The votes of a batch, each marked with the road it came by. */
export const onRoad = (votes: readonly Vote[], road: Vote['road']): Vote[] =>
  votes.map((vote) => (vote.road === road ? vote : { ...vote, road }));

/**
 * The votes of a batch that are new now: those the ledger accepted, plus those of an earlier
 * failed batch that it turned out to hold after all (it knows them now, and did not accept them
 * again). Those leave {@link PipelineState.unconfirmed}.
 */
export function confirmIngested(state: PipelineState, marked: readonly Vote[], accepted: readonly Vote[]): readonly Vote[] {
  // The usual case, no copy: nothing of an earlier batch waits for confirmation.
  if (state.unconfirmed.size === 0) return accepted;
  const confirmed = [...accepted];
  const fresh = new Set(accepted.map((vote) => vote.key));
  for (const vote of marked) {
    const earlier = state.unconfirmed.get(vote.key);
    if (earlier === undefined) continue;
    state.unconfirmed.delete(vote.key);
    if (!fresh.has(vote.key)) confirmed.push(earlier);
  }
  return confirmed;
}

/** Whether an ingest from `road` holds its caller until the backlog drains (the poller only, never a webhook). */
export const holdsCaller = (state: PipelineState, road: Vote['road']): boolean =>
  road === 'poll' && state.phase === 'running' && state.jobs.size > state.maxBacklog;

/** Forgets the job of a vote whose hooks are all done (or that leaves this run): the map renewed when empty. */
export function removeJob(state: PipelineState, key: string): void {
  state.jobs.delete(key);
  state.jobs = renewedWhenEmpty(state.jobs);
}

/** Whether held pollers may go on: the backlog is down to half of `maxBacklog`, or the pipeline stops. */
export const backlogDrained = (state: PipelineState): boolean => state.jobs.size <= state.maxBacklog / 2 || state.phase !== 'running';
