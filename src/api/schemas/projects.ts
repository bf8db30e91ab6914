import { z } from 'zod';
import { openEnum, timestampSchema } from './common.js';

/**
 * Response schemas of the v1 project routes (`GET /projects`, `GET /projects/:id`, announcements),
 * with exactly the contract's fields.
 */

/** Platforms the contract names for a v1 project; others may appear later. */
const PROJECT_PLATFORMS = ['discord', 'roblox'] as const;
/** Project types the contract names for a v1 project; others may appear later. */
const PROJECT_TYPES = ['bot', 'server', 'game'] as const;

/** One project of `GET /projects`. */
export const projectListItemSchema = z.object({
  /** The service project ID. */
  id: z.string(),
  /** The project's ID on its platform. */
  platform_id: z.string(),
  name: z.string(),
  /** `discord` or `roblox`. */
  platform: openEnum(PROJECT_PLATFORMS),
  /** `bot`, `server` or `game`. */
  type: openEnum(PROJECT_TYPES),
});

/** A project as `GET /projects` lists it. */
export type ProjectListItem = z.infer<typeof projectListItemSchema>;

/** One page of `GET /projects`; `cursor` is present while more pages exist. */
export const projectListPageSchema = z.object({
  projects: z.array(projectListItemSchema),
  cursor: z.string().optional(),
});

/** One page of `GET /projects`. */
export type ProjectListPage = z.infer<typeof projectListPageSchema>;

/** `GET /projects/:project_id`. */
export const projectSchema = z.object({
  /** Snowflake. */
  id: z.string(),
  /** The name as on the external platform. */
  name: z.string(),
  /** `discord` or `roblox`. */
  platform: openEnum(PROJECT_PLATFORMS),
  /** `bot`, `server` or `game`. */
  type: openEnum(PROJECT_TYPES),
  /** The short description. */
  headline: z.string(),
  /** Tag IDs. */
  tags: z.array(z.string()),
  /** The current vote count used for ranking. */
  votes: z.number(),
  /** All-time votes. */
  votes_total: z.number(),
  /** Average review score. */
  review_score: z.number(),
  review_count: z.number(),
});

/** A project's detail (`GET /projects/:project_id`). */
export type Project = z.infer<typeof projectSchema>;

/** The answer to `POST /projects/:project_id/announcements`. */
export const announcementSchema = z.object({
  title: z.string(),
  content: z.string(),
  created_at: timestampSchema,
});

/** A published announcement. */
export type Announcement = z.infer<typeof announcementSchema>;
