import { describe, expect, it } from 'vitest';
import { voteHookBody, voteHookEnvironment } from '../../../src/votes/hooks/index.js';
import { OutputTail } from '../../../src/votes/hooks/output-tail.js';
import type { Vote } from '../../../src/votes/types.js';

const pollVote: Vote = {
  key: '123456789:1735732800000',
  userId: '123456789',
  platformId: null,
  projectId: '8',
  weight: 2,
  createdAt: '2025-01-01T12:00:00.000Z',
  expiresAt: '2025-01-02T00:00:00.000Z',
  road: 'poll',
};

describe('voteHookBody', () => {
  it('spells a cursor vote out in snake_case, without the webhook-only fields', () => {
    const body = voteHookBody(pollVote);
    expect(body).toEqual({
      type: 'vote',
      key: '123456789:1735732800000',
      idempotency_key: '123456789:1735732800000',
      vote: {
        user_id: '123456789',
        platform_id: null,
        project_id: '8',
        weight: 2,
        created_at: '2025-01-01T12:00:00.000Z',
        expires_at: '2025-01-02T00:00:00.000Z',
        road: 'poll',
      },
    });
    expect('vote_id' in body.vote).toBe(false);
    expect('user' in body.vote).toBe(false);
  });

  it('adds vote_id and user for a delivered vote, and keeps the key order stable (the signed bytes)', () => {
    const vote: Vote = { ...pollVote, road: 'webhook', platformId: '210987654321098765', voteId: 'v_42', user: { name: 'alice', avatarUrl: null } };
    // Built from a differently ordered copy: the bytes must not depend on the Vote's key order.
    const shuffled = Object.fromEntries(Object.entries(vote).reverse()) as unknown as Vote;
    const text = JSON.stringify(voteHookBody(shuffled));
    expect(text).toBe(
      '{"type":"vote","key":"123456789:1735732800000","idempotency_key":"123456789:1735732800000","vote":{"user_id":"123456789",' +
        '"platform_id":"210987654321098765","project_id":"8","weight":2,"created_at":"2025-01-01T12:00:00.000Z",' +
        '"expires_at":"2025-01-02T00:00:00.000Z","road":"webhook","vote_id":"v_42","user":{"name":"alice","avatar_url":null}}}',
    );
  });
});

describe('voteHookEnvironment', () => {
  it('sets every documented variable, a null platform ID as empty', () => {
    expect(voteHookEnvironment(pollVote, { attempt: 3, idempotencyKey: pollVote.key })).toEqual({
      LISTING_VOTE_KEY: '123456789:1735732800000',
      LISTING_VOTE_USER_ID: '123456789',
      LISTING_VOTE_PLATFORM_ID: '',
      LISTING_VOTE_PROJECT_ID: '8',
      LISTING_VOTE_WEIGHT: '2',
      LISTING_VOTE_CREATED_AT: '2025-01-01T12:00:00.000Z',
      LISTING_VOTE_EXPIRES_AT: '2025-01-02T00:00:00.000Z',
      LISTING_VOTE_ROAD: 'poll',
      LISTING_VOTE_ATTEMPT: '3',
      LISTING_IDEMPOTENCY_KEY: '123456789:1735732800000',
      LISTING_HOOK_TYPE: 'vote',
    });
  });
});

describe('OutputTail', () => {
  it('keeps only the last bytes, whatever the chunk sizes', () => {
    const tail = new OutputTail(10);
    tail.push(Buffer.from('0123456'));
    tail.push(Buffer.from('789ab'));
    expect(tail.text()).toBe('23456789ab');
    expect(tail.truncated).toBe(true);
    tail.push(Buffer.from('x'.repeat(50) + 'END'));
    expect(tail.text()).toBe('xxxxxxxEND');
    expect(tail.size).toBe(10);
  });

  it('quotes the last non-empty lines, leaving out a line cut by the truncation', () => {
    const tail = new OutputTail(30);
    tail.push(Buffer.from('a long first line that is cut\nwarn: one\n\nerror: two\n'));
    expect(tail.lastLines(5, 100)).toBe('warn: one | error: two');
    expect(tail.lastLines(1, 100)).toBe('error: two');
    expect(tail.lastLines(5, 8)).toBe('…or: two'); // at most 8 characters, the ellipsis included;
  });

  it('keeps a single cut line rather than nothing', () => {
    const tail = new OutputTail(8);
    tail.push(Buffer.from('x'.repeat(100) + 'boom'));
    expect(tail.lastLines(5, 100)).toBe('xxxxboom');
  });

  it('is not truncated when the output fits exactly', () => {
    const tail = new OutputTail(4);
    tail.push(Buffer.from('abcd'));
    expect(tail.truncated).toBe(false);
    expect(tail.lastLines(5, 100)).toBe('abcd');
  });
});
