import type { CheckOutcome, CheckResult, DoctorReport } from './types.js';
import { errorMessage } from '../errors.js';

/**
 * The doctor's runner, the pure parts and the one that runs checks: every check at once, each
 * under its own timeout, results in the order given. A check that throws or times out is a `fail`
 * saying so; nothing a check does can make the runner reject.
 */

/** A check as the runner sees it. */
export interface RunnableCheck {
  name: string;
  run(signal: AbortSignal): Promise<CheckOutcome>;
}

/** Options of {@link runChecks}. */
export interface RunChecksOptions {
  /** How long each check may take. */
  timeoutMs: number;
  /** Milliseconds for the durations. Default `performance.now`. */
  clock?: () => number;
}

/** Runs `check` until it settles or `timeoutMs` passes (then its signal aborts and it fails). */
async function runOne(check: RunnableCheck, options: RunChecksOptions): Promise<CheckResult> {
  const clock = options.clock ?? (() => performance.now());
  const started = clock();
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<CheckOutcome>((resolve) => {
    timer = setTimeout(() => {
      controller.abort(new Error(`no answer within ${options.timeoutMs} ms`));
      resolve({
        status: 'fail',
        summary: `no answer within ${formatMs(options.timeoutMs)}`,
        fix: 'something this check waits on hangs (see the summary of the checks before it); raise --timeout if the network is only slow',
      });
    }, options.timeoutMs);
  });
  let outcome: CheckOutcome;
  try {
    outcome = await Promise.race([
      check.run(controller.signal).catch((error: unknown): CheckOutcome => ({
        status: 'fail',
        summary: `the check failed: ${errorMessage(error).replace(/\s+/g, ' ').trim()}`,
        fix: 'the message says what failed; if it does not say what to fix, please report it as a bug of listing-agent doctor',
      })),
      timedOut,
    ]);
  } finally {
    clearTimeout(timer);
    controller.abort(new Error('the check is over'));
  }
  return { name: check.name, ...outcome, durationMs: Math.round(clock() - started) };
}

/** Runs every check at once; resolves with their results in the order of `checks`. Never rejects. */
export function runChecks(checks: readonly RunnableCheck[], options: RunChecksOptions): Promise<CheckResult[]> {
  return Promise.all(checks.map((check) => runOne(check, options)));
}

/** The worst status among `results` (`skip` counts as `ok`). */
export function overallStatus(results: readonly Pick<CheckResult, 'status'>[]): DoctorReport['status'] {
  if (results.some((r) => r.status === 'fail')) return 'fail';
  if (results.some((r) => r.status === 'warn')) return 'warn';
  return 'ok';
}

/** The exit code of `results`: 0 all ok (or skipped), 1 a warn, 2 a fail. */
export function exitCodeFor(results: readonly Pick<CheckResult, 'status'>[]): DoctorReport['exitCode'] {
  const status = overallStatus(results);
  return status === 'fail' ? 2 : status === 'warn' ? 1 : 0;
}

/** The report of `results`. */
export function reportOf(results: CheckResult[]): DoctorReport {
  return { version: 1, status: overallStatus(results), exitCode: exitCodeFor(results), checks: results };
}

/** Secrets shorter than this are not scrubbed as text: they would mangle ordinary words. */
const MIN_SCRUBBED_LENGTH = 4;

function scrubText(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join('********');
  return out;
}

function scrubValue(value: unknown, secrets: readonly string[]): unknown {
  if (typeof value === 'string') return scrubText(value, secrets);
  if (Array.isArray(value)) return value.map((item) => scrubValue(item, secrets));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, scrubValue(item, secrets)]));
  }
  return value;
}

/**
 * `results` with every occurrence of a secret replaced by `********`, in the summaries, fixes and
 * details alike: the last guard, behind checks that never put a secret in words anyway.
 */
export function scrubResults(results: readonly CheckResult[], secrets: Iterable<string>): CheckResult[] {
  // Longest first, so that a secret containing another is replaced whole.
  const list = [...new Set(secrets)].filter((s) => s.length >= MIN_SCRUBBED_LENGTH).sort((a, b) => b.length - a.length);
  if (list.length === 0) return [...results];
  return results.map((result) => scrubValue(result, list) as CheckResult);
}

/** `850 ms`, `5 s`, `1.5 s`. */
export function formatMs(ms: number): string {
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  const seconds = ms / 1_000;
  return `${Number.isInteger(seconds) ? seconds : seconds.toFixed(1)} s`;
}

/** `45 s`, `12 min`, `3 h 5 min`, `2 d 4 h`: an age for people. */
export function formatAge(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1_000));
  if (s < 120) return `${s} s`;
  const min = Math.floor(s / 60);
  if (min < 120) return `${min} min`;
  const h = Math.floor(min / 60);
  if (h < 48) return `${h} h${min % 60 ? ` ${min % 60} min` : ''}`;
  const d = Math.floor(h / 24);
  return `${d} d${h % 24 ? ` ${h % 24} h` : ''}`;
}
