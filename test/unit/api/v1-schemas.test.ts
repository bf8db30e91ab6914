import { describe, expect, it } from 'vitest';
import { refuseRequest, requireValid } from '../../../src/api/context.js';
import { announcementSchema, projectListPageSchema, projectSchema } from '../../../src/api/schemas/projects.js';
import { votesPageSchema, voteStatusSchema } from '../../../src/api/schemas/votes.js';
import { ValidationError } from '../../../src/errors.js';

const PROJECT = {
  id: '1100000000000000001',
  name: 'Test Bot',
  platform: 'discord',
  type: 'bot',
  headline: 'A bot',
  tags: ['music'],
  votes: 3,
  votes_total: 40,
  review_score: 4.5,
  review_count: 2,
};

describe('v1 response schemas', () => {
  it('drop fields the contract does not name, so a new server field breaks nothing', () => {
    expect(projectSchema.parse({ ...PROJECT, banner_url: 'https://example.com/b.png' })).toEqual(PROJECT);
    const vote = { user_id: '1300000000000000001', platform_id: '2', weight: 1, created_at: '2026-03-04T10:00:00.000Z', expires_at: '2026-03-04T22:00:00.000Z' };
    expect(votesPageSchema.parse({ cursor: 'c', data: [{ ...vote, id: 'v1' }], total: 1 })).toEqual({ cursor: 'c', data: [vote] });
  });

  it('accept a platform or type the contract does not list yet', () => {
    const item = { id: '1', platform_id: '2', name: 'Craft', platform: 'minecraft', type: 'game_server' };
    expect(projectListPageSchema.parse({ projects: [item] })).toEqual({ projects: [item] });
  });

  it('refuse a missing or mistyped field and a timestamp that is not a date', () => {
    const { votes: _, ...withoutVotes } = PROJECT;
    expect(projectSchema.safeParse(withoutVotes).success).toBe(false);
    expect(projectSchema.safeParse({ ...PROJECT, tags: 'music' }).success).toBe(false);
    expect(voteStatusSchema.safeParse({ created_at: 'soon', expires_at: '2026-03-04T22:00:00Z', weight: 1 }).success).toBe(false);
    expect(announcementSchema.safeParse({ title: 't', content: 'c', created_at: '2026-03-04T10:00:00+01:00' }).success).toBe(true);
  });

  it('need a cursor on every votes page and allow none on the last projects page', () => {
    expect(votesPageSchema.safeParse({ data: [] }).success).toBe(false);
    expect(projectListPageSchema.parse({ projects: [] })).toEqual({ projects: [] });
  });
});

describe('requireValid and refuseRequest', () => {
  it('return the value, or throw a request ValidationError naming the field', () => {
    expect(requireValid('x.y', { ok: true, value: 5 })).toBe(5);
    const error = (() => {
      try {
        refuseRequest('votes.pages', 'startDate', 'must be a date');
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(ValidationError);
    expect(error).toMatchObject({ subject: 'request', issues: [{ path: 'startDate', message: 'must be a date' }] });
    expect((error as Error).message).toBe('the request of votes.pages is invalid: startDate: must be a date');
  });
});
