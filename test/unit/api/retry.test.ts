import { describe, expect, it } from 'vitest';
import {
  backoffDelay,
  decideRetry,
  DEFAULT_RETRY_POLICY,
  parseRetryAfter,
  retryAfterFromV0Body,
  type AttemptOutcome,
  type RetryPolicy,
} from '../../../src/api/retry.js';

const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY };
const NOW = Date.parse('2026-03-04T10:00:00Z');

describe('backoffDelay (full jitter)', () => {
  it('is 0 when random is 0, and just under the cap when random is 0.999', () => {
    expect(backoffDelay(1, policy, () => 0)).toBe(0);
    expect(backoffDelay(1, policy, () => 0.999)).toBe(499);
    expect(backoffDelay(1, policy, () => 0.999)).toBeLessThan(500);
  });

  it('doubles the cap per retry from baseDelayMs: 500, 1000, 2000, 4000', () => {
    const caps = [1, 2, 3, 4].map((retry) => backoffDelay(retry, policy, () => 0.999_999));
    expect(caps).toEqual([499, 999, 1999, 3999]);
    expect([1, 2, 3, 4].map((retry) => backoffDelay(retry, policy, () => 0.5))).toEqual([250, 500, 1000, 2000]);
  });

  it('never exceeds maxDelayMs, however many retries', () => {
    const small = { baseDelayMs: 500, maxDelayMs: 3000 };
    expect(backoffDelay(3, small, () => 0.999_999)).toBe(1999);
    expect(backoffDelay(4, small, () => 0.999_999)).toBe(2999);
    expect(backoffDelay(40, small, () => 0.999_999)).toBe(2999);
    expect(backoffDelay(60, policy, () => 0.5)).toBe(15_000);
  });

  it('spreads its waits over the whole range [0, cap)', () => {
    const waits = Array.from({ length: 200 }, (_, i) => backoffDelay(3, policy, () => i / 200));
    expect(Math.min(...waits)).toBe(0);
    expect(Math.max(...waits)).toBe(1990);
    expect(waits.every((wait) => Number.isInteger(wait) && wait >= 0 && wait < 2000)).toBe(true);
  });
});

describe('parseRetryAfter', () => {
  it('reads delta seconds, whole and decimal', () => {
    expect(parseRetryAfter('3', NOW)).toBe(3000);
    expect(parseRetryAfter(' 120 ', NOW)).toBe(120_000);
    expect(parseRetryAfter('0', NOW)).toBe(0);
    expect(parseRetryAfter('1.5', NOW)).toBe(1500);
    // No binary noise: 2.007 * 1000 is 2007.0000000000002 in floating point.
    expect(parseRetryAfter('2.007', NOW)).toBe(2007);
    expect(retryAfterFromV0Body({ 'retry-after': 2.007 })).toBe(2007);
    expect(parseRetryAfter('0.0001', NOW)).toBe(1);
  });

  it('reads the three HTTP-date forms, in GMT whatever the local zone', () => {
    expect(parseRetryAfter('Wed, 04 Mar 2026 10:00:30 GMT', NOW)).toBe(30_000);
    expect(parseRetryAfter('Wednesday, 04-Mar-26 10:01:00 GMT', NOW)).toBe(60_000);
    expect(parseRetryAfter('Wed Mar  4 10:00:05 2026', NOW)).toBe(5000);
    const zone = process.env.TZ;
    try {
      // asctime has no zone; `Date.parse` alone would read it in the local one.
      process.env.TZ = 'America/New_York';
      expect(parseRetryAfter('Wed Mar  4 10:00:05 2026', NOW)).toBe(5000);
      expect(parseRetryAfter('Wed, 04 Mar 2026 10:00:30 GMT', NOW)).toBe(30_000);
    } finally {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
  });

  it('gives 0 for a date in the past, never a negative wait', () => {
    expect(parseRetryAfter('Wed, 04 Mar 2026 09:59:00 GMT', NOW)).toBe(0);
    expect(parseRetryAfter('Thu, 01 Jan 1970 00:00:00 GMT', NOW)).toBe(0);
  });

  it('gives undefined for an absent header or garbage', () => {
    for (const value of [undefined, '', '   ', 'soon', '-5', '-1.5', '1e3', '3s', 'abc 2020', 'Mon 5', '2026-03-04', 'Infinity', '1,5']) {
      expect(parseRetryAfter(value, NOW), JSON.stringify(value)).toBeUndefined();
    }
  });
});

describe('retryAfterFromV0Body', () => {
  it('reads {"retry-after": seconds}', () => {
    expect(retryAfterFromV0Body({ 'retry-after': 2 })).toBe(2000);
    expect(retryAfterFromV0Body({ 'retry-after': 0.25, error: 'slow down' })).toBe(250);
    expect(retryAfterFromV0Body({ 'retry-after': '3' })).toBe(3000);
  });

  it('gives undefined for anything else', () => {
    for (const body of [undefined, null, 'retry-after: 2', 2, [], {}, { retryAfter: 2 }, { 'retry-after': -1 }, { 'retry-after': 'soon' }, { 'retry-after': Number.NaN }, { 'retry-after': Number.POSITIVE_INFINITY }]) {
      expect(retryAfterFromV0Body(body), JSON.stringify(body)).toBeUndefined();
    }
  });
});

describe('decideRetry', () => {
  const decide = (outcome: AttemptOutcome, attempt = 1, idempotent = true, random = () => 0.5) =>
    decideRetry(outcome, { attempt, idempotent, policy, random });

  it('retries a 429 after its Retry-After, idempotent or not', () => {
    expect(decide({ kind: 'response', status: 429, retryAfterMs: 3000 })).toMatchObject({ retry: true, delayMs: 3000 });
    expect(decide({ kind: 'response', status: 429, retryAfterMs: 3000 }, 1, false)).toMatchObject({ retry: true, delayMs: 3000 });
    expect(decide({ kind: 'response', status: 429, retryAfterMs: 60_000 })).toMatchObject({ retry: true, delayMs: 60_000 });
  });

  it('retries a 429 without Retry-After after a backoff', () => {
    expect(decide({ kind: 'response', status: 429 }, 1)).toMatchObject({ retry: true, delayMs: 250 });
    expect(decide({ kind: 'response', status: 429 }, 3)).toMatchObject({ retry: true, delayMs: 1000 });
  });

  it('does not retry a 429 whose wait is over the ceiling', () => {
    const decision = decide({ kind: 'response', status: 429, retryAfterMs: 60_001 });
    expect(decision.retry).toBe(false);
    expect(decision.reason).toMatch(/maxRetryAfterMs/);
    expect(decideRetry({ kind: 'response', status: 429, retryAfterMs: 5000 }, { attempt: 1, idempotent: true, policy: { ...policy, maxRetryAfterMs: 4000 }, random: () => 0 }).retry).toBe(false);
  });

  it('retries 502, 503 and 504 for idempotent calls only', () => {
    for (const status of [502, 503, 504]) {
      expect(decide({ kind: 'response', status }, 2)).toMatchObject({ retry: true, delayMs: 500, reason: String(status) });
      expect(decide({ kind: 'response', status }, 1, false)).toMatchObject({ retry: false });
    }
  });

  it('takes a 503 Retry-After within the ceiling, and backs off otherwise', () => {
    expect(decide({ kind: 'response', status: 503, retryAfterMs: 7000 })).toMatchObject({ retry: true, delayMs: 7000 });
    expect(decide({ kind: 'response', status: 503, retryAfterMs: 600_000 })).toMatchObject({ retry: true, delayMs: 250 });
  });

  it('never retries other statuses', () => {
    for (const status of [400, 401, 403, 404, 409, 422, 500, 501, 505]) {
      const decision = decide({ kind: 'response', status });
      expect(decision.retry, String(status)).toBe(false);
    }
    expect(decide({ kind: 'response', status: 404 }).reason).toMatch(/final/);
  });

  it('retries a request that was never sent for every call', () => {
    expect(decide({ kind: 'network', sent: false }, 1, false)).toMatchObject({ retry: true, delayMs: 250, reason: 'not sent' });
    expect(decide({ kind: 'network', sent: false }, 1, true)).toMatchObject({ retry: true });
  });

  it('retries a request that may have been received only when idempotent', () => {
    expect(decide({ kind: 'network', sent: true }, 1, true)).toMatchObject({ retry: true, delayMs: 250 });
    expect(decide({ kind: 'network', sent: true }, 1, false)).toMatchObject({ retry: false });
  });

  it('treats a timeout as possibly received', () => {
    expect(decide({ kind: 'timeout' }, 1, true)).toMatchObject({ retry: true, delayMs: 250, reason: 'timeout' });
    expect(decide({ kind: 'timeout' }, 1, false)).toMatchObject({ retry: false });
  });

  it('stops after maxAttempts, whatever the outcome', () => {
    const outcomes: AttemptOutcome[] = [
      { kind: 'response', status: 429, retryAfterMs: 1000 },
      { kind: 'response', status: 503 },
      { kind: 'network', sent: false },
      { kind: 'timeout' },
    ];
    for (const outcome of outcomes) {
      expect(decide(outcome, 3).retry).toBe(true);
      const last = decide(outcome, 4);
      expect(last.retry).toBe(false);
      expect(last.reason).toMatch(/4 attempts/);
    }
    expect(decideRetry({ kind: 'timeout' }, { attempt: 1, idempotent: true, policy: { ...policy, maxAttempts: 1 }, random: () => 0 }).retry).toBe(false);
  });
});
