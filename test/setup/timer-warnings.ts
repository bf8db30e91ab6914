import { afterEach, expect } from 'vitest';

/**
 * A vitest setup file: a test during which this process printed a TimeoutOverflowWarning,
 * TimeoutNegativeWarning or TimeoutNaNWarning fails, naming the warning. Such a timer fired after
 * 1 ms instead of when it was meant to (typically a deadline on one clock minus the time on
 * another); every computed delay goes through `timerDelay()` (src/contract/timer-delay.ts).
 * Warnings of child processes are the runtime matrix's to catch (scripts/runtime-matrix.ts).
 */

const seen: string[] = [];
process.on('warning', (warning) => {
  if (/^Timeout\w*Warning$/.test(warning.name)) seen.push(`${warning.name}: ${warning.message}`);
});

afterEach(async () => {
  // Warnings are emitted on a later tick than the setTimeout that caused them.
  await new Promise((resolve) => setImmediate(resolve));
  const found = seen.splice(0);
  expect(found, 'a timer was armed with a delay out of range: clamp it with timerDelay()').toEqual([]);
});
