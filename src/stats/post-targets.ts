import type { CapabilityContext } from '../runtime/capability.js';
import { HEADLINES, type AgentLogger } from '../log/agent-logger.js';
import type { AgentMetrics } from '../runtime/metrics.js';
import type { PostFailure, PostResult, PostTarget, StatsEvents } from './events.js';
import { decideFailure, DEFAULT_BACKOFF_BASE_MS, type FailureKind, refusedHint } from './post-failure.js';
import { errorMessage } from '../errors.js';

/**
 * The bookkeeping of each post target (`v1_batch` or `v1`, and `v0`): failures in a row, when it
 * may be tried again, the condition last logged (each is logged once), the `/metrics` counters and
 * the `posted`/`postFailed` events. The poster decides what to send; this decides what a result
 * means for the next try.
 */

/** Where one target stands. */
export interface TargetState {
  failures: number;
  /** Regular posts of this target wait until then (429, backoff); 0: no wait. */
  blockedUntil: number;
  /** A retry timer should post this target again. */
  retry: boolean;
  /** The condition last logged, so that each is logged once. */
  condition: string | undefined;
}

/** Options of {@link createPostTargets}. */
export interface PostTargetsOptions {
  logger: AgentLogger;
  metrics?: Pick<AgentMetrics, 'posts' | 'markSuccess'> | undefined;
  emit: CapabilityContext<StatsEvents>['emit'];
  now: () => number;
  /** Sets the `stats` readiness (a refused token makes it not ready, with the fix). */
  mark: (ready: boolean, detail: string) => void;
  /** The readiness detail once posting works. */
  readyDetail: () => string;
  /** The posting interval: the backoff's cap, and the pace of slow retries. */
  intervalMs: number;
  /** Default 30 s. */
  backoffBaseMs?: number | undefined;
  /** Epoch ms of the next regular post (a refused or rejected post is retried then). */
  nextRegularPost: () => number;
}

/** What a failure came to, for the caller's own follow-up (a refused batch drops entries). */
export interface FailureNote {
  kind: FailureKind;
  retryAt: number;
  /** Log fields for the caller's own line. */
  fields: Record<string, unknown>;
}

/** The bookkeeping's own state: its options, where each target stands, and whether a post went through yet. */
interface TargetsState {
  readonly options: PostTargetsOptions;
  readonly states: Map<PostTarget, TargetState>;
  posted: boolean;
}

function targetState({ states }: TargetsState, name: PostTarget): TargetState {
  let found = states.get(name);
  if (!found) states.set(name, (found = { failures: 0, blockedUntil: 0, retry: false, condition: undefined }));
  return found;
}

function count({ options }: TargetsState, target: PostTarget, result: 'ok' | 'error' | 'skipped'): void {
  options.metrics?.posts.inc({ target, result });
}

function due(targets: TargetsState, name: PostTarget, retrying: boolean): boolean {
  const target = targetState(targets, name);
  if (retrying && !target.retry) return false;
  if (targets.options.now() < target.blockedUntil) {
    targets.options.logger.debug(
      { target: name, until: new Date(target.blockedUntil).toISOString() },
      'post held back (rate limit or backoff)',
    );
    return false;
  }
  return true;
}

function nextRetryAt({ states }: TargetsState): number | undefined {
  const at = [...states.values()].filter((s) => s.retry).map((s) => s.blockedUntil);
  return at.length > 0 ? Math.min(...at) : undefined;
}

function succeeded(targets: TargetsState, name: PostTarget, result: PostResult): void {
  const { options } = targets;
  const { logger } = options;
  const target = targetState(targets, name);
  const afterFailures = target.failures;
  if (target.failures > 0) logger.info({ target: name, failures: target.failures }, 'posting works again');
  if (target.condition?.startsWith('refused')) options.mark(true, options.readyDetail());
  Object.assign(target, { failures: 0, blockedUntil: 0, retry: false, condition: undefined });
  count(targets, name, 'ok');
  options.metrics?.markSuccess('stats', options.now());
  // The first accepted post of this poster says the listing is true now: a line a person sees.
  const last = result.samples.at(-1);
  if (!targets.posted) logger.info({ target: name, serverCount: last?.serverCount, shardCount: last?.shardCount }, HEADLINES.firstPost);
  else logger.debug({ target: name, entries: result.samples.length }, 'posted');
  targets.posted = true;
  options.emit('posted', { ...result, nextPostAt: options.nextRegularPost(), ...(afterFailures > 0 ? { afterFailures } : {}) });
}

function failed(targets: TargetsState, name: PostTarget, error: unknown): FailureNote {
  const { options } = targets;
  const { logger } = options;
  const target = targetState(targets, name);
  target.failures += 1;
  const decision = decideFailure(error, {
    failures: target.failures,
    intervalMs: options.intervalMs,
    backoffBaseMs: options.backoffBaseMs ?? DEFAULT_BACKOFF_BASE_MS,
  });
  const retryAt = decision.retryTimer ? options.now() + decision.retryInMs : options.nextRegularPost();
  target.blockedUntil = decision.retryTimer ? retryAt : 0;
  target.retry = decision.retryTimer;
  const changed = target.condition !== decision.condition;
  target.condition = decision.condition;
  const message = errorMessage(error);
  const fields = { target: name, err: message, retryAt: new Date(retryAt).toISOString(), failures: target.failures };
  if (decision.kind === 'refused') {
    const hint = refusedHint(error);
    options.mark(false, hint);
    // Loud once per change of condition; the slow retries after it stay quiet.
    if (changed) logger.error({ ...fields, fix: 'check service.token' }, hint);
    else logger.debug(fields, 'still refused');
  } else if (decision.kind !== 'rejected') {
    const text =
      decision.kind === 'rate_limited' ? 'rate limited; waiting before the next post' : 'the service is not answering; backing off';
    if (changed) logger.warn(fields, text);
    else logger.debug(fields, text);
  }
  count(targets, name, 'error');
  return { kind: decision.kind, retryAt, fields };
}

/** Creates the per-target bookkeeping. See {@link PostTargetsOptions}. */
export function createPostTargets(options: PostTargetsOptions) {
  const targets: TargetsState = { options, states: new Map(), posted: false };
  return {
    state: (name: PostTarget): TargetState => targetState(targets, name),
    /** Counts a post with nothing to send. */
    skipped: (name: PostTarget): void => count(targets, name, 'skipped'),
    /** Whether `name` may be posted now; a retry posts only targets waiting for one. */
    due: (name: PostTarget, retrying: boolean): boolean => due(targets, name, retrying),
    /** When the retry timer should fire: the earliest target waiting for one, or undefined. */
    nextRetryAt: (): number | undefined => nextRetryAt(targets),
    /** Records a success: resets the target, counts it, emits `posted`. */
    succeeded: (name: PostTarget, result: PostResult): void => succeeded(targets, name, result),
    /**
     * Records a failure: the wait before the next try (Retry-After, backoff, or the next regular
     * post), one log line per change of condition (a refused token at error level, with the fix),
     * the counter. A `rejected` failure is left for the caller to log (it knows what was dropped).
     * Call `emitFailure` after, once the pending count is known.
     */
    failed: (name: PostTarget, error: unknown): FailureNote => failed(targets, name, error),
    /** Emits `postFailed`. */
    emitFailure(name: PostTarget, error: unknown, pendingSamples: number, retryAt: number): void {
      const failure: PostFailure = {
        target: name,
        error: error instanceof Error ? error : new Error(String(error)),
        pendingSamples,
        retryAt,
      };
      options.emit('postFailed', failure);
    },
  };
}

/** The bookkeeping made by {@link createPostTargets}. */
export type PostTargets = ReturnType<typeof createPostTargets>;
