import { describe, expect, it } from 'vitest';
import { parseLegacyVote, verifyLegacyAuthorization } from '../../../src/webhooks/verify.js';

describe('verifyLegacyAuthorization', () => {
  const secrets = ['legacy-secret', 'legacy-next'];

  it('accepts the raw secret, any of several', () => {
    expect(verifyLegacyAuthorization('legacy-secret', secrets)).toBe(true);
    expect(verifyLegacyAuthorization('legacy-next', secrets)).toBe(true);
  });

  it('refuses anything else without throwing, whatever its length', () => {
    for (const header of [undefined, '', 'legacy-secre', 'legacy-secrett', 'x', 'a'.repeat(100_000), 'Bearer legacy-secret', ' legacy-secret']) {
      expect(verifyLegacyAuthorization(header, secrets)).toBe(false);
    }
  });

  it('never matches an empty secret or an empty list', () => {
    expect(verifyLegacyAuthorization('', [''])).toBe(false);
    expect(verifyLegacyAuthorization('legacy-secret', [])).toBe(false);
    expect(verifyLegacyAuthorization('legacy-secret', [undefined, 42] as unknown as string[])).toBe(false);
    expect(verifyLegacyAuthorization('legacy-secret', undefined as unknown as string[])).toBe(false);
  });
});

describe('parseLegacyVote', () => {
  it('parses a bot upvote and a guild test, dropping unknown fields', () => {
    const bot = { bot: '1300000000000000002', user: '1300000000000000004', type: 'upvote', isWeekend: true, query: '?a=1&b=2' };
    expect(parseLegacyVote(JSON.stringify({ ...bot, extra: 1 }))).toEqual({ ok: true, vote: bot });
    const guild = { guild: '1300000000000000005', user: '1300000000000000004', type: 'test' };
    expect(parseLegacyVote(Buffer.from(JSON.stringify(guild)))).toEqual({ ok: true, vote: guild });
  });

  it('refuses bodies of the wrong shape', () => {
    const bad: Array<[unknown, string]> = [
      ['{', 'malformed_body'],
      [[], 'malformed_body'],
      [{ user: '1', type: 'upvote' }, 'malformed_body'],
      [{ bot: '1', guild: '2', user: '1', type: 'upvote' }, 'malformed_body'],
      [{ bot: 1, user: '1', type: 'upvote' }, 'malformed_body'],
      [{ bot: '1', user: '', type: 'upvote' }, 'malformed_body'],
      [{ bot: '1', user: '1', type: 'upvote', isWeekend: 'yes' }, 'malformed_body'],
      [{ bot: '1', user: '1', type: 'upvote', query: 3 }, 'malformed_body'],
      [{ bot: '1', user: '1' }, 'malformed_body'],
      [{ bot: '1', user: '1', type: 'downvote' }, 'unknown_event'],
    ];
    for (const [body, reason] of bad) {
      const raw = typeof body === 'string' ? body : JSON.stringify(body);
      expect(parseLegacyVote(raw)).toEqual({ ok: false, reason });
    }
    expect(parseLegacyVote(new Uint8Array([0xff]))).toEqual({ ok: false, reason: 'malformed_body' });
    expect(parseLegacyVote(42 as unknown as string)).toEqual({ ok: false, reason: 'malformed_body' });
  });
});
