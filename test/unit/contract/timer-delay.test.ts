import { describe, expect, it } from 'vitest';
import { MAX_TIMER_DELAY_MS, timerDelay } from '../../../src/contract/timer-delay.js';

/** The clamp every computed timer delay of src/ goes through (the rule: test/architecture/runtime-portability.check.ts). */
describe('timerDelay', () => {
  it('clamps to [0, 2^31 - 1], NaN to 0', () => {
    expect(timerDelay(23_103_871_113)).toBe(MAX_TIMER_DELAY_MS);
    expect(timerDelay(-5)).toBe(0);
    expect(timerDelay(Number.NaN)).toBe(0);
    expect(timerDelay(1_500.5)).toBe(1_500.5);
    expect(MAX_TIMER_DELAY_MS).toBe(2_147_483_647);
  });
});
