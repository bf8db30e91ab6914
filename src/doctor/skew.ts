import { DOCTOR_DEFAULTS } from './types.js';

/**
 * Clock skew against the service, as pure functions. The service's `Date` header has whole
 * seconds, and the answer took some time to come: the skew is measured against the middle of the
 * request, and what cannot be known (the rounding, half the round trip) is kept as its uncertainty.
 */

/** What one answer says about the two clocks. */
export interface SkewMeasure {
  /** The service's clock minus ours, ms: positive when the service is ahead (this machine is behind). */
  skewMs: number;
  /** How far off `skewMs` may be: half the round trip plus the header's one-second rounding. */
  uncertaintyMs: number;
}

/**
 * The skew an answer's `Date` header shows, for a request sent at `sentAt` and answered at
 * `receivedAt` (our epoch ms); undefined when the header is missing or not a date.
 */
export function measureSkew(dateHeader: string | undefined, sentAt: number, receivedAt: number): SkewMeasure | undefined {
  if (dateHeader === undefined) return undefined;
  const serviceMs = Date.parse(dateHeader);
  if (Number.isNaN(serviceMs)) return undefined;
  const halfTrip = Math.max(0, receivedAt - sentAt) / 2;
  // The header truncates to the second: the service's clock was somewhere in [date, date + 1 s).
  const serviceMid = serviceMs + 500;
  return { skewMs: Math.round(serviceMid - (sentAt + halfTrip)), uncertaintyMs: Math.round(halfTrip + 500) };
}

/** Thresholds of {@link classifySkew}. */
export interface SkewThresholds {
  warnMs: number;
  failMs: number;
}

/**
 * `ok` up to `warnMs` (default 30 s), `warn` up to `failMs` (default 300 s: the webhook signature
 * tolerance), `fail` beyond, in either direction. The uncertainty is given to the clock's benefit:
 * a skew is only reported when it is beyond a threshold for certain.
 */
export function classifySkew(
  measure: SkewMeasure,
  thresholds: SkewThresholds = { warnMs: DOCTOR_DEFAULTS.skewWarnMs, failMs: DOCTOR_DEFAULTS.skewFailMs },
): 'ok' | 'warn' | 'fail' {
  const certain = Math.max(0, Math.abs(measure.skewMs) - measure.uncertaintyMs);
  if (certain > thresholds.failMs) return 'fail';
  if (certain > thresholds.warnMs) return 'warn';
  return 'ok';
}

/** `this machine is 42 s behind the service` / `ahead of`, or `in step with` below a second. */
export function describeSkew(measure: SkewMeasure): string {
  const seconds = Math.round(Math.abs(measure.skewMs) / 1_000);
  if (seconds === 0) return 'this machine is in step with the service (within a second)';
  return `this machine is ${seconds} s ${measure.skewMs > 0 ? 'behind' : 'ahead of'} the service`;
}
