import { describe, expect, it } from 'vitest';
import { createLineLimiter, type IntervalSummary } from '../../../src/runtime/line-limiter.js';
import { manualTime } from '../votes/pipeline-harness.js';

/**
 * The agent's one line limiter: per kind, the first lines of an interval one by one, the rest
 * counted, one summary at the interval's end (on its timer, with no event after it).
 */

function limiter(linesPerInterval = 2) {
  const time = manualTime();
  const summaries: IntervalSummary<string>[] = [];
  const limit = createLineLimiter<string>({ now: time.now, linesPerInterval, intervalMs: 10_000, schedule: time.schedule, summarise: (s) => summaries.push(s) });
  return { time, summaries, limit };
}

describe('createLineLimiter', () => {
  it('writes the first lines of each kind, counts the rest, and summarises them once at the end of the interval', async () => {
    const { time, summaries, limit } = limiter(2);
    const written = Array.from({ length: 1_500 }, (_, i) => limit.take(i % 3 === 0 ? 'a' : 'b'));
    expect(written.filter(Boolean)).toHaveLength(4);
    expect(summaries).toEqual([]);
    expect(time.pending()).toBe(1);

    await time.advance(9_999);
    expect(summaries).toEqual([]);
    await time.advance(1);
    expect(summaries).toHaveLength(1);
    expect(summaries[0]!.counted).toBe(1_496);
    expect(Object.fromEntries(summaries[0]!.kinds)).toEqual({ a: { total: 500, written: 2 }, b: { total: 1_000, written: 2 } });

    // The next interval starts afresh: its first lines are written again.
    expect(limit.take('a')).toBe(true);
  });

  it('keeps no timer and writes no summary while nothing was only counted', async () => {
    const { time, summaries, limit } = limiter(2);
    expect(limit.take('a')).toBe(true);
    expect(limit.take('a')).toBe(true);
    expect(time.pending()).toBe(0);
    await time.advance(60_000);
    limit.flush();
    expect(summaries).toEqual([]);
  });

  it('counts what count() is given without a line, and keeps the first distinct notes', () => {
    const { time, summaries, limit } = limiter(1);
    limit.count('a', 'cause 1');
    for (let i = 0; i < 10; i += 1) limit.count('a', `cause ${i % 5}`);
    expect(limit.take('a')).toBe(true);
    limit.flush();
    expect(summaries).toEqual([
      // Ended by the flush, before its 10 s: `startedAt` says when it began.
      { intervalMs: 10_000, startedAt: time.now(), kinds: new Map([['a', { total: 12, written: 1 }]]), counted: 11, notes: ['cause 1', 'cause 0', 'cause 2'], notesLeftOut: 4 },
    ]);
  });

  it('ends an interval at the next event after it when its timer has not fired (a busy loop, a late timer)', () => {
    let now = 0;
    const summaries: IntervalSummary<string>[] = [];
    const limit = createLineLimiter<string>({ now: () => now, linesPerInterval: 1, intervalMs: 10_000, schedule: () => () => undefined, summarise: (s) => summaries.push(s) });
    expect([limit.take('a'), limit.take('a')]).toEqual([true, false]);
    now = 9_999;
    expect(limit.take('a')).toBe(false);
    expect(summaries).toEqual([]);
    now = 10_000;
    expect(limit.take('a')).toBe(true);
    expect(summaries.map((s) => s.counted)).toEqual([2]);
  });
});
