import { voteKey } from '../contract/vote-key.js';
import type { Vote } from '../runtime/votes.js';
import type { VoteCreateData } from './events.js';

/** The vote of a `vote.create`: keyed like the poller's, so one vote on both roads fires once. */
export function voteFromEvent(data: VoteCreateData): Vote {
  const createdMs = Date.parse(data.created_at);
  return {
    key: voteKey(data.user.id, createdMs),
    userId: data.user.id,
    platformId: data.user.platform_id,
    projectId: data.project.id,
    weight: data.weight,
    // Not a date: `toISOString` throws a RangeError (the event check lets none through).
    createdAt: new Date(createdMs).toISOString(),
    expiresAt: new Date(Date.parse(data.expires_at)).toISOString(),
    road: 'webhook',
    voteId: data.id,
    user: { name: data.user.name, avatarUrl: data.user.avatar_url },
  };
}
