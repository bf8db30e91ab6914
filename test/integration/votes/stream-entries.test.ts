import { describe, expect, it } from 'vitest';
import {
  markerTtl,
  parseAutoClaimReply,
  parsePendingDeliveries,
  parseReadGroupReply,
  voteFromEntry,
  voteToFields,
} from '../../../src/votes/stream-entries.js';
import { testVote } from '../../helpers/stream-votes.js';

// The pure core of the reward stream (no Redis): kept beside the stream tests it serves.
describe('reward stream entries', () => {
  it('writes a vote as fields and reads it back', () => {
    const vote = testVote(3);
    const fields = voteToFields(vote);
    const record = Object.fromEntries(Array.from({ length: fields.length / 2 }, (_, i) => [fields[2 * i], fields[2 * i + 1]]));
    expect(record).toMatchObject({ v: '1', key: vote.key });
    expect(voteFromEntry({ id: '1-0', fields: record })).toEqual({ ok: true, vote });
  });

  it('says why an entry is poison', () => {
    const vote = testVote(1);
    expect(voteFromEntry({ id: '1-0', fields: {} })).toEqual({ ok: false, problem: 'has no vote field' });
    expect(voteFromEntry({ id: '1-0', fields: { vote: '{' } })).toMatchObject({ ok: false, problem: expect.stringContaining('not JSON') });
    expect(voteFromEntry({ id: '1-0', fields: { v: '2', vote: JSON.stringify(vote) } })).toMatchObject({ ok: false, problem: expect.stringContaining('format 2') });
    expect(voteFromEntry({ id: '1-0', fields: { vote: JSON.stringify({ ...vote, key: '', road: 'mail' }) } })).toEqual({ ok: false, problem: 'has a vote with a missing or invalid key, road' });
  });

  it('reads the replies of XREADGROUP (array, object or Map), XAUTOCLAIM and XPENDING', () => {
    const entries = [['1-0', ['vote', 'a']], ['2-0', ['vote', 'b', 'odd']], null];
    const expected = [{ id: '1-0', fields: { vote: 'a' } }, { id: '2-0', fields: { vote: 'b' } }];
    expect(parseReadGroupReply([['s', entries]])).toEqual(expected);
    expect(parseReadGroupReply({ s: entries })).toEqual(expected);
    expect(parseReadGroupReply(new Map([['s', entries]]))).toEqual(expected);
    expect(parseReadGroupReply(null)).toEqual([]);
    expect(parseAutoClaimReply(['3-0', entries, []])).toEqual({ cursor: '3-0', entries: expected });
    expect(parseAutoClaimReply(null)).toEqual({ cursor: '0-0', entries: [] });
    expect(parsePendingDeliveries([['1-0', 'c', 10, 3], ['bad']])).toEqual(new Map([['1-0', 3]]));
  });

  it('keeps a marker until the vote expires plus the slack, at least a minute', () => {
    expect(markerTtl({ expiresAt: new Date(10_000).toISOString() }, 5_000, 0)).toBe(60_000);
    expect(markerTtl({ expiresAt: new Date(3_600_000).toISOString() }, 600_000, 0)).toBe(4_200_000);
    expect(markerTtl({ expiresAt: 'never' }, 120_000, 0)).toBe(120_000);
  });
});
