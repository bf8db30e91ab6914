import { describe, expect, it } from 'vitest';
import { createCooldownTracker, createSlidingWindow } from '../../../src/api/limits.js';

const MINUTE = 60_000;

describe('createSlidingWindow (60 per minute)', () => {
  it('lets 60 through at once and makes the 61st wait until the first slot is 60 s old', () => {
    const window = createSlidingWindow(60, MINUTE);
    for (let i = 0; i < 60; i += 1) expect(window.reserve(1000 + i * 100)).toBe(0);
    // The first slot was taken at 1000; it frees at 61 000.
    expect(window.reserve(10_000)).toBe(51_000);
  });

  it('queues a burst in order, each waiting for the slot 60 takes before it', () => {
    const window = createSlidingWindow(60, MINUTE);
    for (let i = 0; i < 60; i += 1) window.reserve(i * 1000);
    const waits = Array.from({ length: 5 }, () => window.reserve(59_000));
    // Slots 0..4 were taken at 0, 1000, ..., 4000: they free at 60 000, 61 000, ...
    expect(waits).toEqual([1000, 2000, 3000, 4000, 5000]);
  });

  it('queues a burst larger than the limit a whole window later', () => {
    const window = createSlidingWindow(2, MINUTE);
    const waits = Array.from({ length: 6 }, () => window.reserve(0));
    expect(waits).toEqual([0, 0, MINUTE, MINUTE, 2 * MINUTE, 2 * MINUTE]);
  });

  it('frees slots as time passes', () => {
    const window = createSlidingWindow(60, MINUTE);
    for (let i = 0; i < 60; i += 1) window.reserve(0);
    expect(window.reserve(59_999)).toBe(1);
    // A full minute after a burst of 60, a new burst of 60 goes through at once.
    const later = createSlidingWindow(60, MINUTE);
    for (let i = 0; i < 60; i += 1) later.reserve(0);
    for (let i = 0; i < 60; i += 1) expect(later.reserve(MINUTE)).toBe(0);
    expect(later.reserve(MINUTE)).toBe(MINUTE);
  });

  it('counts a slot free at exactly windowMs', () => {
    const window = createSlidingWindow(1, 1000);
    expect(window.reserve(0)).toBe(0);
    expect(window.reserve(999)).toBe(1);
    const exact = createSlidingWindow(1, 1000);
    exact.reserve(0);
    expect(exact.reserve(1000)).toBe(0);
  });

  it('refuses a limit below 1 or a window that is not positive', () => {
    expect(() => createSlidingWindow(0, MINUTE)).toThrow(RangeError);
    expect(() => createSlidingWindow(1.5, MINUTE)).toThrow(RangeError);
    expect(() => createSlidingWindow(60, 0)).toThrow(RangeError);
  });
});

describe('createCooldownTracker', () => {
  it('is free for an unknown key', () => {
    expect(createCooldownTracker().remaining('p1', 1000)).toBe(0);
  });

  it('counts down to the blocked time, then stays at 0', () => {
    const cooldown = createCooldownTracker();
    cooldown.block('p1', 10_000);
    expect(cooldown.remaining('p1', 4000)).toBe(6000);
    expect(cooldown.remaining('p1', 10_000)).toBe(0);
    expect(cooldown.remaining('p1', 20_000)).toBe(0);
  });

  it('keeps keys apart', () => {
    const cooldown = createCooldownTracker();
    cooldown.block('p1', 10_000);
    expect(cooldown.remaining('p2', 0)).toBe(0);
  });

  it('keeps the later of two blocks', () => {
    const cooldown = createCooldownTracker();
    cooldown.block('p1', 10_000);
    cooldown.block('p1', 5000);
    expect(cooldown.remaining('p1', 0)).toBe(10_000);
    cooldown.block('p1', 15_000);
    expect(cooldown.remaining('p1', 0)).toBe(15_000);
  });
});
