import { z } from 'zod';
import { openEnum } from './common.js';

/**
 * Response schemas of the v1 user endpoints (the contract's "User (v1, OAuth)" and "User project"
 * tables). Value lists are open enums (see `openEnum`): a platform the service adds later must not
 * fail `GET /users/@me/projects` as a whole. `z.object` strips unknown keys for the same reason.
 */

/** Platforms a user connection names in the contract. */
const USER_CONNECTION_PLATFORMS = ['discord', 'roblox'] as const;
/** Platforms the user endpoints name in the contract. */
const USER_PROJECT_PLATFORMS = ['discord', 'roblox', 'minecraft'] as const;
/** Project types the user endpoints name (`game_server` on creation for `minecraft`). */
const USER_PROJECT_TYPES = ['bot', 'server', 'game', 'game_server'] as const;
/** The review states the contract names; "further values: not shown". */
const REVIEW_STATUSES = ['draft', 'in_review', 'approved'] as const;

/** One of a user's platform accounts. */
export const userConnectionSchema = z.object({
  /** `discord` or `roblox`. */
  platform: openEnum(USER_CONNECTION_PLATFORMS),
  /** The user's ID on that platform. */
  id: z.string(),
});

/** A platform account linked to a user. */
export type UserConnection = z.infer<typeof userConnectionSchema>;

/** The answer of `GET /users/@me`. */
export const userSchema = z.object({
  /** The service's Snowflake. */
  id: z.string(),
  username: z.string(),
  /** Avatar URL; null when the user has none. */
  avatar: z.string().nullable(),
  connections: z.array(userConnectionSchema),
});

/** The user who authorized the application (`GET /users/@me`). */
export type User = z.infer<typeof userSchema>;

/** A project as the user endpoints show it. */
export const userProjectSchema = z.object({
  id: z.string(),
  platform_id: z.string(),
  name: z.string(),
  /** `discord`, `roblox` or `minecraft`. */
  platform: openEnum(USER_PROJECT_PLATFORMS),
  /** `bot`, `server`, `game`, or `game_server` (Minecraft). */
  type: openEnum(USER_PROJECT_TYPES),
  headline: z.string(),
  /** `draft` on creation; `in_review`, `approved`, and values the contract does not show. */
  review_status: openEnum(REVIEW_STATUSES),
});

/** A project the user manages, or one just created as a `draft`. */
export type UserProject = z.infer<typeof userProjectSchema>;

/** The answer of `GET /users/@me/projects`. */
export const userProjectListSchema = z.array(userProjectSchema);
