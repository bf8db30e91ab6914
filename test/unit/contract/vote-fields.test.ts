import { describe, expect, it } from 'vitest';
import { VOTE_FIELD_LIMITS } from '../../../src/contract/limits.js';
import { printable } from '../../../src/contract/printable.js';
import {
  createdAtProblem,
  describeValue,
  lifetimeProblem,
  platformIdProblem,
  projectProblem,
  snowflakeProblem,
  weightProblem,
} from '../../../src/contract/vote-fields.js';

const NOW = Date.parse('2026-03-04T10:00:00.000Z');
const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
const names = { createdAt: 'created_at', expiresAt: 'expires_at' };

describe('printable', () => {
  it('escapes what could end a line, clear a screen or reorder text, and keeps every other character', () => {
    expect(printable('a\nb\r\tc')).toBe('a\\nb\\r\\tc');
    expect(printable('\u001b[2J\u0007\u007f\u009b')).toBe('\\x1b[2J\\x07\\x7f\\x9b');
    expect(printable('\u2028\u202egnp.exe\u2066')).toBe('\\u2028\\u202egnp.exe\\u2066');
    expect(printable('\ud800 lone')).toBe('\\ud800 lone');
    expect(printable('Élodie 投票 🎉 "quoted" \\ back')).toBe('Élodie 投票 🎉 "quoted" \\ back');
  });
});

describe('the rules a vote from the service keeps (VOTE_FIELD_LIMITS)', () => {
  it('service IDs are Snowflakes of 17 to 20 digits, nothing around them', () => {
    for (const ok of ['10000000000000000', '18446744073709551615', '99999999999999999999']) expect(snowflakeProblem('id', ok)).toBeUndefined();
    for (const bad of ['1000000000000000', '100000000000000000000', 'reminder', '12345678901234567\n', ' 12345678901234567', '１２３４５６７８９０１２３４５６７', 12345678901234567, null]) {
      expect(snowflakeProblem('id', bad)?.reason).toBe('bad_vote_id');
    }
  });

  it('platform IDs are 1 to 20 digits, or empty where the road may not carry one', () => {
    expect(platformIdProblem('platform_id', '7')).toBeUndefined();
    expect(platformIdProblem('platform_id', '', true)).toBeUndefined();
    expect(platformIdProblem('platform_id', '')?.message).toBe('platform_id: must be 1 to 20 digits (got "")');
    expect(platformIdProblem('platform_id', '1'.repeat(21), true)?.message).toBe('platform_id: must be 1 to 20 digits or empty (got "111111111111111111111")');
  });

  it('weight is a whole number from 1 to 10', () => {
    for (const ok of [1, 2, VOTE_FIELD_LIMITS.weightMax]) expect(weightProblem('weight', ok)).toBeUndefined();
    for (const bad of [0, 0.5, 11, -1, 1e308, '1', null]) expect(weightProblem('weight', bad)?.reason).toBe('bad_vote_weight');
    expect(weightProblem('weight', 1e308)?.message).toBe('weight: must be a whole number from 1 to 10 (got 1e+308)');
  });

  it('created_at within 5 minutes ahead of the clock and a year back', () => {
    expect(createdAtProblem('created_at', NOW + 5 * MINUTE, NOW)).toBeUndefined();
    expect(createdAtProblem('created_at', NOW - 365 * DAY, NOW)).toBeUndefined();
    expect(createdAtProblem('created_at', NOW + 5 * MINUTE + 1, NOW)?.reason).toBe('bad_vote_time');
    expect(createdAtProblem('created_at', NOW - 365 * DAY - 1, NOW)?.message).toBe(
      'created_at: must not be more than 365 days old (got 2025-03-04T09:59:59.999Z)',
    );
    expect(createdAtProblem('created_at', Date.parse('+275760-09-12T00:00:00.000Z'), NOW)?.message).toMatch(
      /^created_at: must not be more than 5 minutes ahead of this machine's clock \(2026-03-04T10:00:00.000Z\): check both clocks \(got \+275760-09-12/,
    );
  });

  it('expires_at after created_at, by at most 7 days', () => {
    expect(lifetimeProblem(names, NOW, NOW + 12 * 60 * MINUTE)).toBeUndefined();
    expect(lifetimeProblem(names, NOW, NOW + 7 * DAY)).toBeUndefined();
    expect(lifetimeProblem(names, NOW, NOW)?.message).toMatch(/^expires_at: must be after created_at/);
    expect(lifetimeProblem(names, NOW, NOW + 7 * DAY + 1)?.message).toMatch(/^expires_at: must be at most 7 days after created_at: a vote lasts 12 h/);
  });

  it('a vote for another project names both, and a value is quoted short and printable', () => {
    expect(projectProblem('data.project.id', '1', '1')).toBeUndefined();
    expect(projectProblem('data.project.id', '2', '1')).toEqual({ reason: 'other_project', field: 'data.project.id', message: "data.project.id: 2 is not this agent's project (1)" });
    expect(describeValue('9'.repeat(60_000))).toBe(`60000 characters: "${'9'.repeat(24)}..."`);
    expect(describeValue('a\nb')).toBe('"a\\nb"');
    expect([describeValue(undefined), describeValue({}), describeValue([]), describeValue(true)]).toEqual(['nothing', 'an object', 'an array', 'true']);
  });
});
