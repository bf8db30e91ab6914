/*
 * A vote, as every part of the agent shares it: its shape and its key. The votes cursor and the
 * webhook receiver make them, the vote pipeline records and rewards them, the reminders remind
 * their voters; the service's contract (decisions.md, "One vote, two roads") says what the key is.
 */

/** Which road brought a vote: the votes cursor (`poll`) or a signed delivery (`webhook`). */
export type VoteRoad = 'poll' | 'webhook';

/**
 * A vote as the pipeline sees it, from either road (the votes cursor or a signed delivery). Its
 * `key` identifies it on both roads (decisions.md: `<user_id>:<created_at epoch ms>`).
 */
export interface Vote {
  /** `<user_id>:<created_at epoch ms>`: the dedupe key and every hook call's idempotency key. */
  key: string;
  /** The voter's service user ID. */
  userId: string;
  /** The voter's platform (Discord) ID, when known. */
  platformId: string | null;
  /** The service project ID the vote is for. */
  projectId: string;
  weight: number;
  /** ISO 8601. */
  createdAt: string;
  /** ISO 8601: when the user may vote again. */
  expiresAt: string;
  /** Which road brought it first. */
  road: VoteRoad;
  /** The delivery's `data.id` (webhooks only). */
  voteId?: string;
  /** The voter's name and avatar (webhooks only). */
  user?: { name: string | null; avatarUrl: string | null };
}

/**
 * The key of a vote: `<user_id>:<created_at as epoch milliseconds>` (decisions.md, "One vote, two
 * roads"). A vote that comes by the votes cursor (no vote ID) and by a signed delivery has the same
 * key on both roads, so reward hooks see it once. `createdAt` is the epoch ms, or a timestamp that
 * `Date.parse` reads.
 */
export function voteKey(userId: string, createdAt: string | number): string {
  const createdMs = typeof createdAt === 'number' ? createdAt : Date.parse(createdAt);
  return `${userId}:${createdMs}`;
}
