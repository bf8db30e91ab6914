import { describe, expect, it } from 'vitest';
import { JOURNAL_HEADER, parseRecord, readHeader, recordLine, type JournalRecord } from '../../../src/votes/ledger-records.js';
import type { Vote } from '../../../src/votes/types.js';
import { makeLetter, makeVote } from './votes-fixtures.js';

const webhookVote = (): Vote => ({
  ...makeVote(7),
  road: 'webhook',
  voteId: '1234567890',
  user: { name: 'Zoë "the \\ one"\u0001', avatarUrl: 'https://cdn.example/a.png' },
});

/** A `p` line as version 2 wrote it (arrays, the key `<userId>:<ms>` as its number). */
function version2Line(vote: Vote): string {
  const ms = Number(vote.key.slice(vote.userId.length + 1));
  const fields: unknown[] = ['p', ms, vote.userId, vote.platformId, vote.projectId, vote.weight, vote.createdAt, vote.expiresAt, vote.road === 'webhook' ? 1 : 0];
  if (vote.voteId !== undefined || vote.user !== undefined) fields.push(vote.voteId ?? null);
  if (vote.user !== undefined) fields.push(vote.user.name, vote.user.avatarUrl);
  return JSON.stringify(fields);
}

describe('journal records', () => {
  it('are JSON.stringify of the record objects, one line each, and read back as they were written', () => {
    const vote = webhookVote();
    const records: JournalRecord[] = [
      { t: 'p', v: vote },
      { t: 'p', v: { ...makeVote(2), platformId: null } },
      { t: 'h', k: vote.key, h: 'exec' },
      { t: 'c', k: vote.key },
      { t: 'd', l: makeLetter(vote, 'http') },
      { t: 'x', k: vote.key, h: 'http' },
      { t: 'k', k: vote.key, e: Date.parse(vote.expiresAt) },
      { t: 'e', v: vote, done: ['exec'], dl: ['http'], c: true },
    ];
    for (const record of records) {
      const line = recordLine(record);
      expect(line).toBe(`${JSON.stringify(record)}\n`);
      expect(parseRecord(line.slice(0, -1))).toEqual(record);
    }
    expect(recordLine(JOURNAL_HEADER)).toBe('{"t":"journal","format":"listing-agent votes","version":1}\n');
  });

  it('read version 2 lines: vote records as arrays, and the vote reminders\' records (which the ledger leaves alone)', () => {
    for (const vote of [makeVote(1), webhookVote(), { ...makeVote(3), user: { name: null, avatarUrl: null } }, { ...makeVote(4), voteId: 'only-id' }]) {
      expect(parseRecord(version2Line(vote))).toEqual({ t: 'p', v: vote });
    }
    expect(parseRecord('["h","1:5","exec"]')).toEqual({ t: 'h', k: '1:5', h: 'exec' });
    expect(parseRecord('["c","1:5"]')).toEqual({ t: 'c', k: '1:5' });
    expect(parseRecord('["r","d","8","1",5]')).toEqual({ t: 'r', f: ['d', '8', '1', 5] });
    expect(readHeader('{"t":"journal","format":"listing-agent votes","version":2}')).toEqual({ kind: 'ours', version: 2 });
    expect(readHeader('{"t":"journal","format":"listing-agent votes","version":3}')).toEqual({ kind: 'newer', version: 3 });
  });

  it('refuses lines that are not records', () => {
    const good = JSON.parse(version2Line(makeVote(1))) as unknown[];
    for (const bad of [[], ['q'], ['c'], ['c', 1], ['h', 'k'], ['r'], good.slice(0, 8), [...good.slice(0, 8), 2], [...good.slice(0, 2), 5, ...good.slice(3)], [...good, 5, 6]]) {
      expect(parseRecord(JSON.stringify(bad))).toBeUndefined();
    }
    for (const bad of ['', '{', '{"t":"p","v":{"key":"x"}}', '{"t":"q"}', '{"t":"c"}', '7', 'null']) expect(parseRecord(bad)).toBeUndefined();
  });
});
