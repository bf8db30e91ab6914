import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseRecord, pendingLine, recordLine, voteOfPendingLine } from '../../../src/votes/ledger-records.js';
import type { Vote } from '../../../src/votes/types.js';
import { makeVote } from './votes-fixtures.js';

const webhookVote = (): Vote => ({
  ...makeVote(7),
  road: 'webhook',
  voteId: '1234567890',
  user: { name: 'Zoë "the \\ one"\u0001', avatarUrl: 'https://cdn.example/a.png' },
});

describe('journal records, version 2 (arrays)', () => {
  it('a pending line replays to the same vote, every field a hook gets included', () => {
    for (const vote of [makeVote(1), webhookVote(), { ...makeVote(2), platformId: null }, { ...makeVote(3), user: { name: null, avatarUrl: null } }, { ...makeVote(4), voteId: 'only-id' }]) {
      const line = pendingLine(vote);
      expect(line.endsWith('\n')).toBe(true);
      expect(line.indexOf('\n')).toBe(line.length - 1);
      expect(voteOfPendingLine(line)).toEqual(vote);
      expect(parseRecord(line.slice(0, -1))).toEqual({ t: 'p', v: vote });
    }
  });

  it('writes a `<userId>:<ms>` key as the number only, and any other key whole', () => {
    const vote = makeVote(1);
    expect(vote.key).toBe(`${vote.userId}:${Date.parse(vote.createdAt)}`);
    expect(JSON.parse(pendingLine(vote))[1]).toBe(Date.parse(vote.createdAt));
    for (const key of ['custom-key', `${vote.userId}:0123`, `${vote.userId}:-5`, `${vote.userId}:1.5`, `${vote.userId}:`, `${vote.userId}x:1`, `${vote.userId}:12345678901234567`]) {
      const odd = { ...vote, key };
      expect(JSON.parse(pendingLine(odd))[1]).toBe(key);
      expect(voteOfPendingLine(pendingLine(odd)).key).toBe(key);
    }
  });

  it('is the text JSON.stringify makes of the record array, for fields of any content', () => {
    // What the line was before it was put together field by field: the reference.
    const reference = (vote: Vote): string => {
      const suffix = vote.key.startsWith(`${vote.userId}:`) ? vote.key.slice(vote.userId.length + 1) : '';
      const keyField = /^(?:0|[1-9][0-9]{0,14})$/.test(suffix) ? Number(suffix) : vote.key;
      const fields: unknown[] = ['p', keyField, vote.userId, vote.platformId, vote.projectId, vote.weight, vote.createdAt, vote.expiresAt, vote.road === 'webhook' ? 1 : 0];
      if (vote.voteId !== undefined || vote.user !== undefined) fields.push(vote.voteId ?? null);
      if (vote.user !== undefined) fields.push(vote.user.name, vote.user.avatarUrl);
      return `${JSON.stringify(fields)}\n`;
    };
    // Quotes, backslashes, control characters, lone and paired surrogates, non-ASCII.
    const text = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.constantFrom('"', '\\', '\u0000', '\u001f', '\ud800', '\udfff', '\ud83d\ude00', 'é', '\u2028'));
    const nullable = fc.option(text, { nil: null });
    const userId = fc.oneof(text, fc.bigInt({ min: 0n, max: 10n ** 20n }).map(String));
    const ms = fc.oneof(fc.integer({ min: 0, max: 999_999_999_999_999 }).map(String), text, fc.constantFrom('0', '00', '01', '-1', '1e3', '1234567890123456'));
    const vote = fc
      .record({
        userId,
        ms,
        platformId: nullable,
        projectId: text,
        weight: fc.oneof(fc.integer({ min: -5, max: 5 }), fc.double(), fc.constant(-0)),
        createdAt: text,
        expiresAt: text,
        road: fc.constantFrom('poll' as const, 'webhook' as const),
        voteId: fc.option(text, { nil: undefined }),
        user: fc.option(fc.record({ name: nullable, avatarUrl: nullable }), { nil: undefined }),
        otherKey: fc.option(text, { nil: undefined }),
      })
      .map(({ userId, ms, otherKey, voteId, user, ...rest }): Vote => ({
        ...rest,
        userId,
        key: otherKey ?? `${userId}:${ms}`,
        ...(voteId === undefined ? {} : { voteId }),
        ...(user === undefined ? {} : { user }),
      }));
    fc.assert(
      fc.property(vote, (each) => {
        expect(pendingLine(each)).toBe(reference(each));
      }),
      { numRuns: 1000 },
    );
  });

  it('is smaller than the version 1 object line', () => {
    const vote = makeVote(1);
    const v1 = `${JSON.stringify({ t: 'p', v: vote })}\n`;
    expect(pendingLine(vote).length).toBeLessThan(v1.length - 80);
    expect(recordLine({ t: 'c', k: vote.key })).toBe(`["c",${JSON.stringify(vote.key)}]\n`);
    expect(parseRecord(recordLine({ t: 'h', k: vote.key, h: 'exec' }).trim())).toEqual({ t: 'h', k: vote.key, h: 'exec' });
  });

  it('refuses array lines that are not records', () => {
    const good = JSON.parse(pendingLine(makeVote(1))) as unknown[];
    for (const bad of [[], ['q'], ['c'], ['c', 1], ['h', 'k'], good.slice(0, 8), [...good.slice(0, 8), 2], [...good.slice(0, 2), 5, ...good.slice(3)], [...good, 5, 6]]) {
      expect(parseRecord(JSON.stringify(bad))).toBeUndefined();
    }
  });

  it('still reads version 1 object lines', () => {
    const vote = webhookVote();
    expect(parseRecord(JSON.stringify({ t: 'p', v: vote }))).toEqual({ t: 'p', v: vote });
    expect(parseRecord(JSON.stringify({ t: 'c', k: 'a:1' }))).toEqual({ t: 'c', k: 'a:1' });
  });
});
