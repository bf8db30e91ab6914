/**
 * The pure core of retries: backoff with full jitter, `Retry-After` parsing, and the decision of
 * whether an outcome may be retried. The transport feeds it outcomes; a clock and randomness come in
 * as arguments.
 */

/** How the transport retries. */
export interface RetryPolicy {
  /** Attempts in all, the first included. Default 4. */
  maxAttempts: number;
  /** The backoff's base: the cap of the first retry's random wait. Default 500 ms. */
  baseDelayMs: number;
  /** The cap of any backoff wait. Default 30 000 ms. */
  maxDelayMs: number;
  /**
   * A `Retry-After` longer than this is not waited for: the call fails at once with a
   * `RateLimitError` carrying the wait. Default 60 000 ms.
   */
  maxRetryAfterMs: number;
}

/** The defaults of {@link RetryPolicy}. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: 4,
  baseDelayMs: 500,
  maxDelayMs: 30_000,
  maxRetryAfterMs: 60_000,
};

/** What one attempt came to. */
export type AttemptOutcome =
  | { kind: 'response'; status: number; retryAfterMs?: number | undefined }
  /** No answer. `sent` is false when the request certainly never reached the service (refused, DNS). */
  | { kind: 'network'; sent: boolean }
  | { kind: 'timeout' };

/** Whether and when to try again. */
export type RetryDecision = { retry: true; delayMs: number; reason: string } | { retry: false; reason: string };

/**
 * Full-jitter exponential backoff: a random wait in [0, min(maxDelayMs, baseDelayMs * 2^(retry-1))).
 * `retry` counts from 1; `random` returns [0, 1).
 */
export function backoffDelay(retry: number, policy: Pick<RetryPolicy, 'baseDelayMs' | 'maxDelayMs'>, random: () => number): number {
  const cap = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, retry - 1));
  return Math.floor(random() * cap);
}

/**
 * Milliseconds from a `Retry-After` header: delta seconds (`120`) or an HTTP date. Undefined when
 * absent or unreadable; never negative.
 */
export function parseRetryAfter(header: string | undefined, nowMs: number): number | undefined {
  if (header === undefined) return undefined;
  const value = header.trim();
  if (/^\d+(\.\d+)?$/.test(value)) return Math.ceil(Number(value) * 1000);
  const date = Date.parse(value);
  if (Number.isNaN(date) || !/[a-z]/i.test(value)) return undefined;
  return Math.max(0, date - nowMs);
}

/** Milliseconds from v0's 429 body `{"retry-after": <seconds>}`; undefined when absent. */
export function retryAfterFromV0Body(body: unknown): number | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const value = (body as Record<string, unknown>)['retry-after'];
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.ceil(value * 1000) : undefined;
}

const RETRYABLE_SERVER_STATUSES = new Set([502, 503, 504]);

/**
 * Decides whether `outcome` of attempt number `attempt` (from 1) is tried again.
 * - 429 was not processed: retried for every call, after `Retry-After` (or backoff when absent);
 *   a wait longer than `maxRetryAfterMs` is not retried (the caller fails fast with it).
 * - 502/503/504, timeouts and resets may have reached the service: retried only when `idempotent`.
 * - A request that never left (connection refused, DNS) is retried for every call.
 */
export function decideRetry(
  outcome: AttemptOutcome,
  context: { attempt: number; idempotent: boolean; policy: RetryPolicy; random: () => number },
): RetryDecision {
  const { attempt, idempotent, policy, random } = context;
  const backoff = () => backoffDelay(attempt, policy, random);
  let decision: RetryDecision;
  if (outcome.kind === 'response') {
    if (outcome.status === 429) {
      if (outcome.retryAfterMs !== undefined && outcome.retryAfterMs > policy.maxRetryAfterMs) {
        return { retry: false, reason: `Retry-After ${outcome.retryAfterMs} ms is longer than maxRetryAfterMs` };
      }
      decision = { retry: true, delayMs: outcome.retryAfterMs ?? backoff(), reason: '429' };
    } else if (RETRYABLE_SERVER_STATUSES.has(outcome.status)) {
      decision = idempotent
        ? { retry: true, delayMs: outcome.retryAfterMs !== undefined && outcome.retryAfterMs <= policy.maxRetryAfterMs ? outcome.retryAfterMs : backoff(), reason: String(outcome.status) }
        : { retry: false, reason: `${outcome.status} on a call that is not idempotent` };
    } else {
      return { retry: false, reason: `status ${outcome.status} is final` };
    }
  } else if (outcome.kind === 'network' && !outcome.sent) {
    decision = { retry: true, delayMs: backoff(), reason: 'not sent' };
  } else {
    decision = idempotent
      ? { retry: true, delayMs: backoff(), reason: outcome.kind }
      : { retry: false, reason: `${outcome.kind} on a call that is not idempotent` };
  }
  if (decision.retry && attempt >= policy.maxAttempts) {
    return { retry: false, reason: `${decision.reason}, and ${policy.maxAttempts} attempts were made` };
  }
  return decision;
}
