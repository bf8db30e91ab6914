import { z } from 'zod';
import { voteFieldsProblem, type VoteFieldProblem } from '../../contract/vote-fields.js';
import { timestampSchema } from './common.js';

/** Response schemas of the v1 vote routes, with exactly the contract's fields. */

/** One vote of `GET /projects/:project_id/votes`, as the contract types it. */
export const voteRecordShape = z.object({
  /** The voter's service user ID. */
  user_id: z.string(),
  /** The voter's ID on the platform. */
  platform_id: z.string(),
  /** How many votes this action counted for (2 on weekends for chat-platform bots). */
  weight: z.number(),
  /** When the user voted. */
  created_at: timestampSchema,
  /** When the user may vote again. */
  expires_at: timestampSchema,
});

/**
 * A vote as the votes cursor lists it (no vote ID: see decisions.md, "One vote, two roads"), once
 * it keeps the rules of `VOTE_FIELD_LIMITS`: `user_id` a Snowflake, `platform_id` digits (or
 * empty), `weight` a whole number from 1 to 10, `expires_at` after `created_at` by at most 7 days.
 */
export type VoteRecord = z.infer<typeof voteRecordShape>;

/** A record of a page that breaks the contract's types or the rules of `VOTE_FIELD_LIMITS`: left out of `data`. */
export interface InvalidVoteRecord extends VoteFieldProblem {
  /** Its position in the page's `data` as the service sent it. */
  index: number;
}

/** One page of the votes cursor. */
export interface VotesPage {
  /** Where the next page starts; present also with empty `data`. */
  cursor: string;
  /** The records that keep the contract's types and rules, in the service's order. */
  data: VoteRecord[];
  /** The records left out of `data`, with why; absent when there are none. */
  invalid?: InvalidVoteRecord[];
}

const RECORD_NAMES = { userId: 'user_id', platformId: 'platform_id', weight: 'weight', createdAt: 'created_at', expiresAt: 'expires_at' };

/** One record of a page: the record, or why it is left out. */
function checkRecord(item: unknown, index: number): VoteRecord | InvalidVoteRecord {
  const shaped = voteRecordShape.safeParse(item);
  if (!shaped.success) {
    const issue = shaped.error.issues[0];
    const field = issue?.path.join('.') || 'record';
    return { index, reason: 'bad_vote_shape', field, message: `${field}: ${issue?.message ?? 'must be a vote record'}` };
  }
  const record = shaped.data;
  const values = {
    userId: record.user_id,
    platformId: record.platform_id,
    weight: record.weight,
    createdMs: Date.parse(record.created_at),
    expiresMs: Date.parse(record.expires_at),
  };
  const problem = voteFieldsProblem(values, RECORD_NAMES, { emptyPlatformId: true });
  return problem === undefined ? record : { index, ...problem };
}

/**
 * One page of `GET /projects/:project_id/votes`: `cursor` is always present, also with empty
 * `data`. Each record is checked on its own: one that breaks the contract goes to `invalid`, so it
 * never costs the rest of its page, and the cursor can move past it.
 */
export const votesPageSchema = z.object({ cursor: z.string(), data: z.array(z.unknown()) }).transform(({ cursor, data }): VotesPage => {
  const records: VoteRecord[] = [];
  const invalid: InvalidVoteRecord[] = [];
  data.forEach((item, index) => {
    const checked = checkRecord(item, index);
    if ('reason' in checked) invalid.push(checked);
    else records.push(checked);
  });
  return invalid.length === 0 ? { cursor, data: records } : { cursor, data: records, invalid };
});

/** `GET /projects/:project_id/votes/:user_id`: the user's active vote. */
export const voteStatusSchema = z.object({
  created_at: timestampSchema,
  /** The vote is active while the current time is before this. */
  expires_at: timestampSchema,
  weight: z.number(),
});

/** A user's active vote. */
export type VoteStatus = z.infer<typeof voteStatusSchema>;
