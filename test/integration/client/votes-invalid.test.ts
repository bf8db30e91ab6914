import { describe, expect, it } from 'vitest';
import { createListingClient, type VoteRecord } from '../../../src/public/client.js';
import { snowflake, startHostileService } from '../../helpers/hostile-service.js';

/*
 * Issue 34, item 5: a votes page with records that break the contract (a buggy or compromised
 * service) is still a page: the client leaves those records out of `data` and lists them in
 * `invalid` with the field and why, so one bad record never costs the rest, and its cursor counts.
 */

describe('the votes cursor through the client, with records that break the contract', () => {
  it('pages() keeps the valid records in data and lists the others in invalid; iterate() yields the valid ones', async () => {
    const now = Date.now();
    const good = (n: number): VoteRecord => ({
      user_id: snowflake(n),
      platform_id: '',
      weight: 2,
      created_at: new Date(now - 60_000).toISOString(),
      expires_at: new Date(now + 3_600_000).toISOString(),
    });
    const page = [good(1), { ...good(2), weight: 0.5 }, { ...good(3), user_id: 'reminder' }, 'not a record', { ...good(4), expires_at: 'soon' }, good(5)];
    const service = await startHostileService({ pages: [page] });
    const client = createListingClient({ projectToken: service.token, v1BaseUrl: service.v1 });
    try {
      const pages = [];
      for await (const listed of client.votes.pages({ startDate: new Date(now - 3_600_000) })) pages.push(listed);
      expect(pages[0]).toEqual({
        cursor: 'c1',
        data: [good(1), good(5)],
        invalid: [
          { index: 1, reason: 'bad_vote_weight', field: 'weight', message: 'weight: must be a whole number from 1 to 10 (got 0.5)' },
          { index: 2, reason: 'bad_vote_id', field: 'user_id', message: 'user_id: must be a Snowflake, 17 to 20 digits (got "reminder")' },
          { index: 3, reason: 'bad_vote_shape', field: 'record', message: expect.stringMatching(/^record: /) },
          { index: 4, reason: 'bad_vote_shape', field: 'expires_at', message: 'expires_at: must be an ISO 8601 timestamp' },
        ],
      });
      expect(pages[1]).toEqual({ cursor: 'c1', data: [] });
      const all = [];
      for await (const record of client.votes.iterate({ startDate: new Date(now - 3_600_000) })) all.push(record.user_id);
      expect(all).toEqual([snowflake(1), snowflake(5)]);
    } finally {
      await client.close();
    }
  });
});
