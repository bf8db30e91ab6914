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

/** Whole milliseconds, rounded up, without binary noise (`1.1 * 1000` is 1100.0000000000002). */
function secondsToMs(seconds: number): number {
  return Math.ceil(Math.round(seconds * 1e6) / 1e3);
}

const DAY = '(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)';
const LONG_DAY = '(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)';
const MONTH = '(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)';
const TIME = '\\d{2}:\\d{2}:\\d{2}';
/** The three HTTP-date forms of RFC 9110 section 5.6.7; the last (asctime) has no zone and means GMT. */
const IMF_FIXDATE = new RegExp(`^${DAY}, \\d{2} ${MONTH} \\d{4} ${TIME} GMT$`);
const RFC850_DATE = new RegExp(`^${LONG_DAY}, \\d{2}-${MONTH}-\\d{2} ${TIME} GMT$`);
const ASCTIME_DATE = new RegExp(`^${DAY} ${MONTH} [ \\d]\\d ${TIME} \\d{4}$`);

/**
 * Milliseconds from a `Retry-After` header: delta seconds (`120`, also `1.5`) or an HTTP date.
 * Undefined when absent or unreadable; never negative (a date in the past is 0).
 */
export function parseRetryAfter(header: string | undefined, nowMs: number): number | undefined {
  if (header === undefined) return undefined;
  const value = header.trim();
  if (/^\d+(\.\d+)?$/.test(value)) return secondsToMs(Number(value));
  // Only the HTTP-date forms: `Date.parse` alone reads garbage such as "soon 5" or "-5" as dates.
  let date: number;
  if (IMF_FIXDATE.test(value) || RFC850_DATE.test(value)) date = Date.parse(value);
  // asctime carries no zone, and `Date.parse` would read it in the local one.
  else if (ASCTIME_DATE.test(value)) date = Date.parse(`${value} GMT`);
  else return undefined;
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - nowMs);
}

/** Milliseconds from v0's 429 body `{"retry-after": <seconds>}`; undefined when absent. */
export function retryAfterFromV0Body(body: unknown): number | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const raw = (body as Record<string, unknown>)['retry-after'];
  // A proxy may hand the number over as a string; read both.
  const value = typeof raw === 'string' && /^\d+(\.\d+)?$/.test(raw.trim()) ? Number(raw) : raw;
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? secondsToMs(value) : undefined;
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
        ? {
            retry: true,
            delayMs:
              outcome.retryAfterMs !== undefined && outcome.retryAfterMs <= policy.maxRetryAfterMs ? outcome.retryAfterMs : backoff(),
            reason: String(outcome.status),
          }
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
