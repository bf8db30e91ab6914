import { voteKey } from '../contract/vote-key.js';
import type { Vote } from '../runtime/votes.js';
import type { VoteCreateData } from './events.js';
import { instantOf } from '../contract/iso-time.js';
import { integerText } from './iso-time.js';

/** The vote of a `vote.create`: keyed like the poller's, so one vote on both roads fires once. */
export function voteFromEvent(data: VoteCreateData): Vote {
  const created = instantOf(data.created_at);
  const expires = instantOf(data.expires_at);
  return {
    // voteKey(user, ms) is `${user}:${ms}`: the same text, with the ms printed faster.
    key: Number.isInteger(created.ms) ? `${data.user.id}:${integerText(created.ms)}` : voteKey(data.user.id, created.ms),
    userId: data.user.id,
    platformId: data.user.platform_id,
    projectId: data.project.id,
    weight: data.weight,
    // Not a date: a RangeError, as `new Date(NaN).toISOString()` throws.
    createdAt: created.iso ?? new Date(created.ms).toISOString(),
    expiresAt: expires.iso ?? new Date(expires.ms).toISOString(),
    road: 'webhook',
    voteId: data.id,
    user: { name: data.user.name, avatarUrl: data.user.avatar_url },
  };
}
