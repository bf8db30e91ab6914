import type { HookCallContext, Vote, VoteHook } from '../types.js';
import { errorLine, HOOK_DEFAULTS, VoteHookError } from './errors.js';

/** The name of the in-process hook: the agent's `vote` event. Config hooks may not take it. */
export const IN_PROCESS_HOOK_NAME = 'vote-event';

/** A `vote` listener: may return a promise, which is awaited. */
export type VoteListener = (vote: Vote) => unknown;

/** Options of {@link createInProcessHook}. */
export interface InProcessHookOptions {
  /** Names the hook in logs, metrics and dead letters. Default `vote-event`. */
  name?: string;
  /** The event the listeners listen to, for messages. Default `vote` (the reminders' hook: `reminder`). */
  event?: string;
  /**
   * The current listeners, read at each call so listeners added later take part. Pass
   * `() => agent.rawListeners('vote')`: unlike `listeners()`, it gives the wrappers of `once`
   * listeners, so those are called once and removed.
   */
  listeners: () => readonly VoteListener[];
  /** Retries after a failure before the vote is dead-lettered for this hook. Default 5. */
  retries?: number;
  /**
   * How long the listeners may take together before the call fails (they keep running: a
   * function cannot be stopped from outside). Default: no limit of its own; the call's signal
   * (the agent stopping) still ends the wait.
   */
  timeoutMs?: number;
}

/**
 * The hook behind the agent's `vote` event, for bots that embed the agent: every listener is called
 * with the vote, all at once, and all are awaited. The call succeeds when every listener returned
 * or resolved; it fails when one threw or rejected (after waiting for the others), so the vote is
 * retried and dead-lettered like any hook's. No listener at all fails too ("no vote listener is
 * attached"): the vote stays pending, is retried and dead-lettered, never counted as rewarded.
 * The agent makes this hook only when a listener is attached as it starts.
 *
 * A retry calls every listener again, also those that succeeded, so a listener should make its
 * reward idempotent with `vote.key`.
 *
 * @example
 * ```ts
 * agent.on('vote', async (vote) => {
 *   await db.rewards.upsert({ key: vote.key, user: vote.platformId, coins: 100 * vote.weight });
 * });
 * ```
 */
export function createInProcessHook(options: InProcessHookOptions): VoteHook {
  const name = options.name ?? IN_PROCESS_HOOK_NAME;
  const event = options.event ?? 'vote';
  const noListener = `no ${event} listener is attached: attach one with agent.on('${event}', ...); ` +
    `the ${event} stays pending and is retried`;

  async function run(vote: Vote, context: HookCallContext): Promise<void> {
    if (context.signal.aborted) {
      throw new VoteHookError(name, 'aborted', 'listeners not called: the call was aborted (the agent is stopping)');
    }
    const listeners = [...options.listeners()];
    if (listeners.length === 0) throw new VoteHookError(name, 'no_listener', noListener);
    const all = Promise.allSettled(
      listeners.map(async (listener) => {
        // Inside an async function, a listener that throws becomes a rejection like any other.
        await listener(vote);
      }),
    );
    const results = await race(all, context.signal, options.timeoutMs, name);
    const failures = results.flatMap((result, index) =>
      result.status === 'rejected' ? [{ index, reason: result.reason as unknown }] : [],
    );
    if (failures.length > 0) throw listenersFailed(name, listeners, failures);
  }

  return { name, retries: options.retries ?? HOOK_DEFAULTS.retries, run };
}

/** The hook's error for the listeners that threw or rejected (`index` into `listeners`). */
function listenersFailed(
  name: string,
  listeners: readonly VoteListener[],
  failures: ReadonlyArray<{ index: number; reason: unknown }>,
): VoteHookError {
  const of = `of ${listeners.length}`;
  const described = failures.map(({ index, reason }) => `#${index + 1} ${of}${label(listeners[index]!)}: ${errorLine(reason)}`);
  const message =
    failures.length === 1 ? `vote listener ${described[0]}` : `${failures.length} vote listeners failed: ${described.join('; ')}`;
  const cause = failures.length === 1 ? failures[0]!.reason : new AggregateError(failures.map((failure) => failure.reason), message);
  return new VoteHookError(name, 'listener', message, { cause });
}

/** ` (name)` for a named function, '' for an anonymous one or a `once` wrapper. */
function label(listener: VoteListener): string {
  const fnName = (listener as { listener?: { name?: string } }).listener?.name ?? listener.name;
  return fnName && fnName !== 'bound onceWrapper' ? ` (${fnName})` : '';
}

/** `work`, unless the signal aborts or `timeoutMs` passes first: then a VoteHookError. */
function race<T>(work: Promise<T>, signal: AbortSignal, timeoutMs: number | undefined, name: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    const done = () => {
      if (timer) clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    };
    const onAbort = () => {
      done();
      reject(new VoteHookError(name, 'aborted', 'stopped waiting for the vote listeners (the agent is stopping)'));
    };
    // A listener may have aborted it while it ran.
    if (signal.aborted) {
      onAbort();
      return;
    }
    signal.addEventListener('abort', onAbort, { once: true });
    if (timeoutMs !== undefined) {
      timer = setTimeout(() => {
        done();
        reject(new VoteHookError(name, 'timeout', `the vote listeners did not finish within ${timeoutMs} ms`));
      }, timeoutMs);
      timer.unref();
    }
    work.then(
      (value) => {
        done();
        resolve(value);
      },
      (error: unknown) => {
        done();
        reject(error);
      },
    );
  });
}
