import { describe, expect, it } from 'vitest';
import { CRON_GAP_MAX_MATCHES, longestCronGapMs } from '../../../src/runtime/scheduler.js';
import { longestPostGapMs } from '../../../src/stats/post-interval.js';

// A Wednesday in June: no daylight saving change in the week after it, in any time zone.
const WEDNESDAY = Date.parse('2026-06-03T12:00:00Z');
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

describe('longestCronGapMs', () => {
  it('gives the step of a regular pattern', () => {
    expect(longestCronGapMs('*/30 * * * *', WEDNESDAY)).toBe(30 * MINUTE);
    expect(longestCronGapMs('0 */6 * * *', WEDNESDAY)).toBe(6 * HOUR);
  });

  it('finds the weekend of a weekday pattern: Friday 09:00 to Monday 09:00', () => {
    expect(longestCronGapMs('0 9 * * 1-5', WEDNESDAY)).toBe(72 * HOUR);
  });

  it('counts the first gap of a pattern that matches less than once a week', () => {
    // 1 July to 1 August.
    expect(longestCronGapMs('0 0 1 * *', WEDNESDAY)).toBe(31 * 24 * HOUR);
  });

  it(`gives a per-minute pattern its minute, walking at most ${CRON_GAP_MAX_MATCHES} matches`, () => {
    expect(longestCronGapMs('* * * * *', WEDNESDAY)).toBe(MINUTE);
  });

  it('is undefined for a pattern that never matches', () => {
    // 30 February.
    expect(longestCronGapMs('0 0 30 2 *', WEDNESDAY)).toBeUndefined();
  });
});

describe('longestPostGapMs', () => {
  it('is the interval plus the jitter without a schedule', () => {
    expect(longestPostGapMs({ interval: 30 * MINUTE, jitter: 0 }, WEDNESDAY)).toBe(30 * MINUTE);
    expect(longestPostGapMs({ interval: 30 * MINUTE, jitter: 5 * MINUTE }, WEDNESDAY)).toBe(35 * MINUTE);
  });

  it("is the schedule's longest gap plus the jitter with one, whatever the interval", () => {
    expect(longestPostGapMs({ interval: 30 * MINUTE, schedule: '0 9 * * 1-5', jitter: 5 * MINUTE }, WEDNESDAY)).toBe(72 * HOUR + 5 * MINUTE);
  });
});
