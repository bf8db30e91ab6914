import type { HookCallContext, Vote } from '../types.js';

/*
 * What every out-of-process hook receives, in one place: the http hook POSTs this body, the exec
 * hook writes it to stdin and also spells it out as environment variables. The README documents
 * both, so any change here is a change of the public contract with the bot's own code.
 */

/**
 * What a hook carries: the votes to reward (`vote`) or the reminders of `votes.reminders`
 * (`reminder`). Given where the hook is made, by the pipeline it serves, never read from a key's
 * text: a voter whose ID is `reminder` would otherwise have a key that looks like a reminder's.
 */
export type HookKind = 'vote' | 'reminder';

/**
 * The JSON body of a hook call (http hook: the POST body; exec hook: stdin). Field names are
 * snake_case like the service's own payloads. `vote_id` and `user` are present only for votes
 * that came by a signed delivery; every other field is always present.
 *
 * @example
 * ```json
 * {
 *   "type": "vote",
 *   "key": "123456789:1735732800000",
 *   "idempotency_key": "123456789:1735732800000",
 *   "vote": {
 *     "user_id": "123456789", "platform_id": "210987654321098765", "project_id": "8",
 *     "weight": 1, "created_at": "2025-01-01T12:00:00.000Z", "expires_at": "2025-01-02T00:00:00.000Z",
 *     "road": "webhook", "vote_id": "v_42", "user": { "name": "alice", "avatar_url": null }
 *   }
 * }
 * ```
 */
export interface VoteHookBody {
  /** `vote` for a reward; `reminder` for a vote reminder (votes.reminders), keyed `reminder:<vote key>`: the pipeline's hooks say which. */
  type: HookKind;
  /** The vote key, `<user_id>:<created_at epoch ms>`: the same vote always has the same key. */
  key: string;
  /** Equal to `key`; named for what a receiver should do with it (also sent as a header / env var). */
  idempotency_key: string;
  vote: {
    /** The voter's service user ID. */
    user_id: string;
    /** The voter's platform (Discord) ID, or null when the road did not carry it. */
    platform_id: string | null;
    project_id: string;
    /** 1, or 2 on weekends. */
    weight: number;
    /** ISO 8601. */
    created_at: string;
    /** ISO 8601: when the user may vote again. */
    expires_at: string;
    /** Which road brought the vote first: the votes cursor (`poll`) or a signed delivery (`webhook`). */
    road: 'poll' | 'webhook';
    /** The delivery's vote ID (webhook road only). */
    vote_id?: string;
    /** The voter's name and avatar (webhook road only). */
    user?: { name: string | null; avatar_url: string | null };
  };
}

/**
 * The body every hook call carries for `vote`, of the `kind` its hook carries (default `vote`).
 * Built field by field (not spread) so the key order, and so the exact bytes a signature covers,
 * stay the same from one release to the next.
 */
export function voteHookBody(vote: Vote, kind: HookKind = 'vote'): VoteHookBody {
  const body: VoteHookBody = {
    type: kind,
    key: vote.key,
    idempotency_key: vote.key,
    vote: {
      user_id: vote.userId,
      platform_id: vote.platformId,
      project_id: vote.projectId,
      weight: vote.weight,
      created_at: vote.createdAt,
      expires_at: vote.expiresAt,
      road: vote.road,
    },
  };
  if (vote.voteId !== undefined) body.vote.vote_id = vote.voteId;
  if (vote.user !== undefined) body.vote.user = { name: vote.user.name, avatar_url: vote.user.avatarUrl };
  return body;
}

/**
 * The environment variables the exec hook sets for a call (on top of its base environment, which
 * they override), `LISTING_HOOK_TYPE` the `kind` its hook carries (default `vote`). A null
 * `platformId` is the empty string: an environment has no null.
 */
export function voteHookEnvironment(
  vote: Vote,
  context: Pick<HookCallContext, 'attempt' | 'idempotencyKey'>,
  kind: HookKind = 'vote',
): Record<string, string> {
  return {
    LISTING_VOTE_KEY: vote.key,
    LISTING_VOTE_USER_ID: vote.userId,
    LISTING_VOTE_PLATFORM_ID: vote.platformId ?? '',
    LISTING_VOTE_PROJECT_ID: vote.projectId,
    LISTING_VOTE_WEIGHT: String(vote.weight),
    LISTING_VOTE_CREATED_AT: vote.createdAt,
    LISTING_VOTE_EXPIRES_AT: vote.expiresAt,
    LISTING_VOTE_ROAD: vote.road,
    LISTING_VOTE_ATTEMPT: String(context.attempt),
    LISTING_IDEMPOTENCY_KEY: context.idempotencyKey,
    LISTING_HOOK_TYPE: kind,
  };
}
