import { afterEach, describe, expect, it, vi } from 'vitest';
import { exitCodeFor, formatAge, overallStatus, reportOf, runChecks, scrubResults } from '../../../src/doctor/runner.js';
import type { CheckResult } from '../../../src/doctor/types.js';

afterEach(() => {
  vi.useRealTimers();
});

const result = (status: CheckResult['status'], extra: Partial<CheckResult> = {}): CheckResult => ({ name: `c-${status}`, status, summary: status, durationMs: 0, ...extra });

describe('the doctor runner', () => {
  it('runs every check at once and keeps their order', async () => {
    let running = 0;
    let most = 0;
    const check = (name: string, order: number) => ({
      name,
      async run() {
        running += 1;
        most = Math.max(most, running);
        await new Promise((resolve) => setImmediate(resolve));
        for (let i = 0; i < order; i += 1) await Promise.resolve();
        running -= 1;
        return { status: 'ok' as const, summary: name };
      },
    });
    const results = await runChecks([check('a', 3), check('b', 0), check('c', 1)], { timeoutMs: 1_000 });
    expect(results.map((r) => r.name)).toEqual(['a', 'b', 'c']);
    expect(most).toBe(3);
  });

  it('fails a check that outlives its timeout, and aborts its signal', async () => {
    vi.useFakeTimers();
    let signal: AbortSignal | undefined;
    const pending = runChecks(
      [
        { name: 'hangs', run: (s) => ((signal = s), new Promise(() => undefined)) },
        { name: 'quick', run: async () => ({ status: 'ok', summary: 'fine' }) },
      ],
      { timeoutMs: 2_000, clock: () => Date.now() },
    );
    await vi.advanceTimersByTimeAsync(2_000);
    const [hangs, quick] = await pending;
    expect(hangs).toMatchObject({ name: 'hangs', status: 'fail', summary: 'no answer within 2 s', durationMs: 2_000 });
    expect(hangs!.fix).toContain('--timeout');
    expect(signal?.aborted).toBe(true);
    expect(quick).toMatchObject({ status: 'ok', summary: 'fine' });
  });

  it('turns a check that throws into a fail with its message, on one line', async () => {
    const [thrown] = await runChecks([{ name: 'bug', run: () => Promise.reject(new Error('boom\n  at somewhere')) }], { timeoutMs: 1_000 });
    expect(thrown).toMatchObject({ status: 'fail', summary: 'the check failed: boom at somewhere' });
  });

  it('exits 0 when every check is ok or skipped, 1 on a warn, 2 on a fail', () => {
    expect(exitCodeFor([result('ok'), result('skip')])).toBe(0);
    expect(exitCodeFor([])).toBe(0);
    expect(exitCodeFor([result('ok'), result('warn'), result('skip')])).toBe(1);
    expect(exitCodeFor([result('warn'), result('fail')])).toBe(2);
    expect(overallStatus([result('skip')])).toBe('ok');
    expect(reportOf([result('warn')])).toEqual({ version: 1, status: 'warn', exitCode: 1, checks: [result('warn')] });
  });

  it('scrubs every secret from summaries, fixes and nested details, the longest first', () => {
    const planted = result('fail', {
      summary: 'token abc.def.ghi refused',
      fix: 'not abc.def.ghi',
      details: { seen: ['x-abc.def.ghi-y', { deep: 'abc.def' }], count: 3, none: null },
    });
    const [scrubbed] = scrubResults([planted], ['abc.def', 'abc.def.ghi', 'ab']);
    expect(scrubbed).toEqual({
      ...planted,
      summary: 'token ******** refused',
      fix: 'not ********',
      details: { seen: ['x-********-y', { deep: '********' }], count: 3, none: null },
    });
    // A secret of a few characters would shred ordinary words: left alone.
    expect(scrubResults([result('ok', { summary: 'about' })], ['ab'])[0]!.summary).toBe('about');
  });

  it('writes ages for people', () => {
    expect(formatAge(45_000)).toBe('45 s');
    expect(formatAge(12 * 60_000)).toBe('12 min');
    expect(formatAge((3 * 60 + 5) * 60_000)).toBe('3 h 5 min');
    expect(formatAge(52 * 3_600_000)).toBe('2 d 4 h');
  });
});
