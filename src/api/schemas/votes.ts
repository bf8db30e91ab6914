import { z } from 'zod';
import { timestampSchema } from './common.js';

/** Response schemas of the v1 vote routes, with exactly the contract's fields. */

/** One vote of `GET /projects/:project_id/votes`. */
const voteRecordSchema = z.object({
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

/** A vote as the votes cursor lists it (no vote ID: see decisions.md, "One vote, two roads"). */
export type VoteRecord = z.infer<typeof voteRecordSchema>;

/** One page of `GET /projects/:project_id/votes`: `cursor` is always present, also with empty `data`. */
export const votesPageSchema = z.object({
  cursor: z.string(),
  data: z.array(voteRecordSchema),
});

/** One page of the votes cursor. */
export type VotesPage = z.infer<typeof votesPageSchema>;

/** `GET /projects/:project_id/votes/:user_id`: the user's active vote. */
export const voteStatusSchema = z.object({
  created_at: timestampSchema,
  /** The vote is active while the current time is before this. */
  expires_at: timestampSchema,
  weight: z.number(),
});

/** A user's active vote. */
export type VoteStatus = z.infer<typeof voteStatusSchema>;
