import { afterEach, describe, expect, it, vi } from 'vitest';
import { settleWithin } from '../../../src/runtime/settle.js';

afterEach(() => vi.useRealTimers());

describe('settleWithin', () => {
  it("answers 'done' when the work settles in time, whether it resolves or rejects", async () => {
    expect(await settleWithin(Promise.resolve(1), 1_000)).toBe('done');
    expect(await settleWithin(Promise.reject(new Error('handled by its owner')), 1_000)).toBe('done');
  });

  it("answers 'timeout' at the limit, and leaves no timer behind either way", async () => {
    vi.useFakeTimers();
    const never = new Promise<void>(() => undefined);
    const waiting = settleWithin(never, 5_000);
    await vi.advanceTimersByTimeAsync(4_999);
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(await waiting).toBe('timeout');
    expect(vi.getTimerCount()).toBe(0);
    expect(await settleWithin(Promise.resolve(), 5_000)).toBe('done');
    expect(vi.getTimerCount()).toBe(0);
  });

  it('treats a deadline already past as no wait at all', async () => {
    vi.useFakeTimers();
    const waiting = settleWithin(new Promise<void>(() => undefined), -20);
    await vi.advanceTimersByTimeAsync(0);
    expect(await waiting).toBe('timeout');
  });
});
