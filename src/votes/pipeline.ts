import { ListingAgentError } from '../errors.js';
import { backoffDelay, createFifo, errorText, notRunning, realSchedule, settleWithin, type Job, type Task } from './pipeline-parts.js';
import type { VotePipeline, VotePipelineOptions } from './pipeline-types.js';
import type { DeadLetter, HookCallContext, HookRun, LedgerEntry, Vote, VoteHook } from './types.js';
import { createVoteLog } from './vote-log.js';

export { backoffDelay, realSchedule, type BackoffOptions, type Schedule } from './pipeline-parts.js';
export type { IngestDetails, IngestResult, VotePipeline, VotePipelineEmit, VotePipelineOptions } from './pipeline-types.js';

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
  const { ledger, logger, metrics, now, emit } = options;
  const random = options.random ?? Math.random;
  const schedule = options.schedule ?? realSchedule;
  const concurrency = Math.max(1, options.concurrency ?? 16);
  const compactEveryMs = options.compactEveryMs ?? 300_000;
  const voteLog = createVoteLog({ logger, now, schedule, ...options.voteLog });
  const hookNames = options.hooks.map((hook) => hook.name);
  const hooks = new Map<string, VoteHook>();
  for (const hook of options.hooks) {
    if (hooks.has(hook.name)) throw new ListingAgentError('votes_hook_name', `two vote hooks are named "${hook.name}": hook names must be unique (they key the ledger's records)`);
    hooks.set(hook.name, hook);
  }

  let phase: 'new' | 'starting' | 'running' | 'stopping' | 'stopped' = 'new';
  /** Bumped by every start: work of an earlier run must not touch this run's counters. */
  let generation = 0;
  const jobs = new Map<string, Job>();
  const maxBacklog = options.maxBacklog ?? 2_000;
  /** Pollers held until the backlog is down to half of `maxBacklog`. */
  let drainWaiters: Array<() => void> = [];
  const releaseDrained = () => {
    if (drainWaiters.length > 0 && (jobs.size <= maxBacklog / 2 || phase !== 'running')) {
      const waiting = drainWaiters;
      drainWaiters = [];
      for (const wake of waiting) wake();
    }
  };
  /**
   * Per hook, per user: the tasks queued behind the one running or waiting (`null`: none behind).
   * A user has an entry while one of their tasks for that hook is active.
   */
  const lanes = new Map<VoteHook, Map<string, Task[] | null>>(options.hooks.map((hook) => [hook, new Map()]));
  const ready = createFifo<Task>();
  let running = 0;
  const retryTimers = new Set<() => void>();
  /** Signals handed to hook calls still running (made on first use: most in-process hooks never look). */
  const controllers = new Set<AbortController>();
  /** Set once a stop passed its deadline: calls of this run asking for their signal get it aborted. */
  let abortReason: Error | undefined;
  /** Hook calls and ledger writes in flight: what `stop()` waits for and `idle()` watches. */
  const inFlight = new Set<Promise<unknown>>();
  let idleWaiters: Array<() => void> = [];
  let kicked = false;
  let cancelCompaction: (() => void) | undefined;
  let starting: Promise<void> | undefined;
  let stopping: Promise<void> | undefined;
  /**
   * Votes of a batch whose recording failed: the ledger may still write them (the file ledger
   * retries a failed append). When a later batch brings one again and the ledger then knows it,
   * it is durable by then, and its hooks run now rather than at the next start.
   */
  const unconfirmed = new Map<string, Vote>();
  /** Subscribed to the ledger's recovered votes (once: the listener checks the phase). */
  let recovering = false;

  function checkIdle(): void {
    if (idleWaiters.length === 0 || jobs.size > 0 || inFlight.size > 0) return;
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  /** Runs `work` in the background; it must not reject (callers catch). */
  function track(work: Promise<unknown>): void {
    inFlight.add(work);
    void work.finally(() => {
      inFlight.delete(work);
      checkIdle();
    });
  }

  function kick(): void {
    // setImmediate, not a microtask: `ingest()` callers (a webhook answering 2xx) go first.
    if (kicked) return;
    kicked = true;
    setImmediate(() => {
      kicked = false;
      pump();
    });
  }

  function pump(): void {
    while (phase === 'running' && running < concurrency && ready.length > 0) {
      const task = ready.shift();
      if (task === undefined) break;
      running += 1;
      track(call(task));
    }
  }

  function enqueue(job: Job, hook: VoteHook): void {
    const task: Task = { job, hook, attempt: 1, generation };
    const users = lanes.get(hook) as Map<string, Task[] | null>;
    const { userId } = job.vote;
    if (!users.has(userId)) {
      users.set(userId, null);
      ready.push(task);
      kick();
      return;
    }
    const behind = users.get(userId);
    if (behind) behind.push(task);
    else users.set(userId, [task]);
  }

  function addJob(vote: Vote, wanted: readonly string[], recordEachHook: boolean, gaveUp = false): void {
    const names = wanted.filter((name) => hooks.has(name));
    let job = jobs.get(vote.key);
    if (job === undefined) {
      job = { vote, outstanding: 0, recordEachHook, gaveUp };
      jobs.set(vote.key, job);
    }
    job.recordEachHook ||= recordEachHook;
    job.gaveUp ||= gaveUp;
    job.outstanding += names.length;
    for (const name of names) enqueue(job, hooks.get(name) as VoteHook);
    if (job.outstanding === 0) finishJob(job);
  }

  function finishJob(job: Job): void {
    jobs.delete(job.vote.key);
    releaseDrained();
    track(ledger.recordComplete(job.vote.key).catch((error: unknown) => logger.error({ key: job.vote.key, err: error }, 'could not record a finished vote; the next start records it (its hooks are done)')));
  }

  /** The lane's head is done (succeeded, dead-lettered or abandoned): its next task may run. */
  function advanceLane(task: Task): void {
    if (task.generation !== generation) return;
    const users = lanes.get(task.hook) as Map<string, Task[] | null>;
    const { userId } = task.job.vote;
    const next = users.get(userId)?.shift();
    if (next === undefined) users.delete(userId);
    else {
      ready.push(next);
      kick();
    }
  }

  function hookFinished(task: Task): void {
    // While stopping, calls that finish still complete their votes; after the stop, nothing does.
    if (task.generation !== generation || phase === 'stopped') return;
    task.job.outstanding -= 1;
    if (task.job.outstanding === 0 && jobs.get(task.job.vote.key) === task.job) {
      if (!task.job.gaveUp) voteLog.rewarded(task.job.vote, hookNames);
      finishJob(task.job);
    }
  }

  async function call(task: Task): Promise<void> {
    const { job, hook } = task;
    const { vote } = job;
    let controller: AbortController | undefined;
    const context: HookCallContext = {
      idempotencyKey: vote.key,
      attempt: task.attempt,
      // Lazily: an AbortSignal is an EventTarget, a few hundred bytes; at 20 000 votes/s that shows.
      get signal() {
        if (controller === undefined) {
          controller = new AbortController();
          if (abortReason !== undefined && task.generation === generation) controller.abort(abortReason);
          else controllers.add(controller);
        }
        return controller.signal;
      },
    };
    let failure: unknown;
    let ok = false;
    const startedAt = now();
    const ran = (result: HookRun['result'], error?: string) =>
      emit?.('voteHookRan', { key: vote.key, hook: hook.name, attempt: task.attempt, result, durationMs: now() - startedAt, ...(error === undefined ? {} : { error }) });
    try {
      await hook.run(vote, context);
      ok = true;
    } catch (error) {
      failure = error;
    } finally {
      if (controller !== undefined) controllers.delete(controller);
      if (task.generation === generation) running -= 1;
    }
    const current = task.generation === generation && phase === 'running';
    if (ok) {
      metrics?.hookRuns.inc({ hook: hook.name, result: 'ok' });
      ran('ok');
      advanceLane(task);
      pump();
      if (!job.recordEachHook && job.outstanding === 1 && task.generation === generation && phase !== 'stopped') {
        hookFinished(task); // the last hook: `complete` records its success
        return;
      }
      // Recorded even after a stop: a success known to the ledger is one call fewer next start.
      await ledger.recordHookDone(vote.key, hook.name).then(
        () => hookFinished(task),
        (error: unknown) => {
          logger.error({ hook: hook.name, key: vote.key, err: error }, 'could not record a successful hook run; it may run again after a restart');
          // Completing is still right: the hook did succeed, and `complete` says so too.
          hookFinished(task);
        },
      );
      return;
    }
    if (!current) return; // stopped: the vote stays pending and this hook re-runs next start
    pump();
    if (task.attempt <= hook.retries) {
      metrics?.hookRuns.inc({ hook: hook.name, result: 'error' });
      ran('error', errorText(failure));
      const delayMs = backoffDelay(task.attempt, random, options.backoff);
      logger.warn({ hook: hook.name, key: vote.key, attempt: task.attempt, retryInMs: delayMs, error: errorText(failure) }, 'vote hook failed; retrying');
      const cancel = schedule(() => {
        retryTimers.delete(cancel);
        task.attempt += 1;
        ready.push(task);
        pump();
      }, delayMs);
      retryTimers.add(cancel);
      return;
    }
    metrics?.hookRuns.inc({ hook: hook.name, result: 'dead_letter' });
    const letter: DeadLetter = { key: vote.key, hook: hook.name, vote, attempts: task.attempt, error: errorText(failure), failedAt: new Date(now()).toISOString() };
    ran('dead_letter', letter.error);
    logger.error({ hook: hook.name, key: vote.key, attempts: task.attempt, error: letter.error }, 'vote hook gave up; dead-lettered (listing-agent votes failed lists it, votes retry replays it)');
    advanceLane(task);
    job.recordEachHook = true;
    job.gaveUp = true;
    await ledger.recordDeadLetter(letter).then(
      () => {
        emit?.('voteDeadLettered', letter);
        hookFinished(task);
      },
      (error: unknown) => {
        logger.error({ hook: hook.name, key: vote.key, err: error }, 'could not record a dead letter; the vote stays pending and its hook re-runs after a restart');
        // Never `complete` without the dead letter on record: that would lose the vote for this hook.
        if (task.generation === generation && jobs.get(vote.key) === job) {
          jobs.delete(vote.key);
          releaseDrained();
        }
      },
    );
  }

  function resume(entry: LedgerEntry): void {
    const finished = new Set([...entry.done, ...(entry.deadLettered ?? [])]);
    const gaveUp = (entry.deadLettered ?? []).length > 0;
    addJob(
      entry.vote,
      [...hooks.keys()].filter((name) => !finished.has(name)),
      gaveUp,
      gaveUp,
    );
  }

  /**
   * Votes the ledger took over from a stopped agent (a shared ledger's `onRecovered`): run like
   * the pending votes of a start. A key already running here is skipped; one from a failed batch
   * is confirmed now, so a retried delivery of it is a plain duplicate.
   */
  function recover(entries: readonly LedgerEntry[]): void {
    // Not running: they stay pending under this agent, for its next start or the agent taking over.
    if (phase !== 'running') return;
    let resumed = 0;
    for (const entry of entries) {
      unconfirmed.delete(entry.vote.key);
      if (jobs.has(entry.vote.key)) continue;
      resume(entry);
      resumed += 1;
    }
    if (resumed > 0) logger.info({ votes: resumed }, 'resuming votes left pending by an agent that stopped');
  }

  function scheduleCompaction(): void {
    cancelCompaction = schedule(() => {
      if (phase !== 'running') return;
      track(
        ledger
          .compact(now())
          .catch((error: unknown) => logger.warn({ err: error }, 'could not compact the vote ledger; trying again later'))
          .finally(() => {
            if (phase === 'running') scheduleCompaction();
          }),
      );
    }, compactEveryMs);
  }

  async function drain(deadline: number): Promise<void> {
    if (await settleWithin(inFlight, deadline - now(), schedule)) return;
    abortReason = new ListingAgentError('votes_stopped', 'the agent is stopping: the stop deadline passed');
    for (const controller of controllers) controller.abort(abortReason);
    logger.warn({ aborted: controllers.size }, 'stop deadline reached: aborted vote hooks still running; their votes stay pending and re-run at the next start');
  }

  const pipeline: VotePipeline = {
    start() {
      if (phase === 'running') return Promise.resolve();
      starting ??= (async () => {
        if (stopping !== undefined) await stopping;
        phase = 'starting';
        let pending: LedgerEntry[];
        try {
          pending = await ledger.open();
        } catch (error) {
          phase = 'stopped';
          throw error;
        }
        for (const warning of ledger.warnings?.() ?? []) logger.warn({ ledger: ledger.describe() }, warning);
        generation += 1;
        running = 0;
        abortReason = undefined;
        unconfirmed.clear();
        phase = 'running';
        for (const entry of pending) resume(entry);
        if (pending.length > 0) logger.info({ votes: pending.length }, 'resuming votes left pending by the last run');
        if (!recovering && ledger.onRecovered !== undefined) {
          recovering = true;
          ledger.onRecovered(recover);
        }
        scheduleCompaction();
      })().finally(() => (starting = undefined));
      return starting;
    },

    async ingest(votes, road, details) {
      if (phase !== 'running') throw notRunning('ingest votes');
      metrics?.votesReceived.inc({ road }, votes.length);
      const marked = votes.map((vote) => (vote.road === road ? vote : { ...vote, road }));
      const unknown = marked.filter((vote) => !ledger.has(vote.key));
      let accepted: Vote[];
      try {
        accepted = await ledger.recordPending(marked);
      } catch (error) {
        if (ledger.recoversLostRecords !== true) for (const vote of unknown) unconfirmed.set(vote.key, vote);
        throw error;
      }
      const confirmed = [...accepted];
      if (unconfirmed.size > 0) {
        const fresh = new Set(accepted.map((vote) => vote.key));
        for (const vote of marked) {
          const earlier = unconfirmed.get(vote.key);
          if (earlier === undefined) continue;
          unconfirmed.delete(vote.key);
          if (!fresh.has(vote.key)) confirmed.push(earlier);
        }
      }
      for (const vote of confirmed) {
        voteLog.received(vote, details?.traceId);
        emit?.('voteReceived', vote);
      }
      // After a stop the votes are pending in the ledger: the next start runs them.
      if (phase === 'running') for (const vote of confirmed) addJob(vote, [...hooks.keys()], false);
      // The votes are durable already; holding the poller only bounds what waits in memory.
      if (road === 'poll' && phase === 'running' && jobs.size > maxBacklog) {
        await new Promise<void>((resolve) => drainWaiters.push(resolve));
      }
      return { accepted, duplicates: votes.length - accepted.length };
    },

    async stop(deadline) {
      if (starting !== undefined) await starting.catch(() => undefined);
      if (phase !== 'running') return stopping ?? Promise.resolve();
      phase = 'stopping';
      // A held poller goes on (its votes are durable; the next start runs their hooks).
      releaseDrained();
      cancelCompaction?.();
      voteLog.flush();
      for (const cancel of retryTimers) cancel();
      retryTimers.clear();
      ready.clear();
      for (const users of lanes.values()) users.clear();
      stopping = drain(deadline).finally(() => {
        jobs.clear();
        phase = 'stopped';
        stopping = undefined;
        checkIdle();
      });
      return stopping;
    },

    failed: () => ledger.deadLetters(),

    async retry(filter = {}) {
      if (phase !== 'running') throw notRunning('retry dead letters');
      if (filter.hook !== undefined && !hooks.has(filter.hook)) {
        throw new ListingAgentError('votes_unknown_hook', `no vote hook is named "${filter.hook}"; the hooks are: ${[...hooks.keys()].join(', ') || '(none)'}`);
      }
      const names = filter.hook === undefined ? [...hooks.keys()] : [filter.hook];
      const taken: DeadLetter[] = [];
      for (const hook of names) taken.push(...(await ledger.takeDeadLetters({ ...(filter.keys === undefined ? {} : { keys: filter.keys }), hook })));
      // Taken letters are pending again in the ledger: a crash from here on re-runs them at start.
      if (phase === 'running') for (const letter of taken) addJob(letter.vote, [letter.hook], true);
      return taken.length;
    },

    idle() {
      if (jobs.size === 0 && inFlight.size === 0) return Promise.resolve();
      return new Promise<void>((resolve) => idleWaiters.push(resolve));
    },

    stats: () => ({ votes: jobs.size, running, waiting: ready.length, retrying: retryTimers.size }),

    [Symbol.asyncDispose]: () => pipeline.stop(now() + 10_000),
  };
  return pipeline;
}
