import { z } from 'zod';
import { timestampSchema } from './common.js';

/**
 * Response schemas of the legacy v0 API (the contract's "Bot (v0)", "Bot stats (v0)" and
 * "User profile (v0)" tables), field for field. `z.object` strips unknown keys, so a field the
 * service adds later does not break the client.
 */

/** A bot as `GET /bots` lists it. */
export const botSchema = z.object({
  /** The platform application Snowflake. */
  id: z.string(),
  username: z.string(),
  discriminator: z.string(),
  /** Avatar hash, or null. */
  avatar: z.string().nullable(),
  /** Default avatar hash, or null. */
  defAvatar: z.string().nullable(),
  lib: z.string(),
  prefix: z.string(),
  shortdesc: z.string(),
  /** Markdown or HTML, or null. */
  longdesc: z.string().nullable(),
  tags: z.array(z.string()),
  website: z.string().nullable(),
  /** Support server invite code, or null. */
  support: z.string().nullable(),
  github: z.string().nullable(),
  /** Owner Snowflakes. */
  owners: z.array(z.string()),
  /** Featured guild IDs. */
  guilds: z.array(z.string()),
  invite: z.string().nullable(),
  /** When the bot was added (ISO 8601). */
  date: timestampSchema,
  server_count: z.number().nullable(),
  shard_count: z.number().nullable(),
  certifiedBot: z.boolean(),
  vanity: z.string().nullable(),
  /** All-time votes. */
  points: z.number(),
  /** Votes this month. */
  monthlyPoints: z.number(),
  /** Empty when unused. */
  donationbotguildid: z.string(),
});

/** A bot of the v0 API. */
export type Bot = z.infer<typeof botSchema>;

/** A field name of {@link Bot} (what `sort` and `fields` of `GET /bots` take). */
export type BotField = keyof Bot;

/** Every {@link BotField}, in the contract's order. */
export const BOT_FIELDS = Object.keys(botSchema.shape) as BotField[];

/** One page of `GET /bots` whose results are `T`. */
export interface BotsPage<T = Bot> {
  results: T[];
  /** The page size used. */
  limit: number;
  /** Bots skipped before the first result. */
  offset: number;
  /** Results in this page. */
  count: number;
  /** Bots matching, over every page. */
  total: number;
}

/** The page schema of `GET /bots` around a result schema (the whole {@link botSchema}, or a pick of it). */
export function botsPageSchema<T extends z.ZodType>(result: T) {
  return z.object({
    results: z.array(result),
    limit: z.number(),
    offset: z.number(),
    count: z.number(),
    total: z.number(),
  });
}

/** The answer of `GET /bots/:bot_id/stats`. */
export const botStatsSchema = z.object({
  /** The total server count; absent when unknown. */
  server_count: z.number().optional(),
  /** Server count per shard (empty when none were posted). */
  shards: z.array(z.number()),
  /** Absent when unknown. */
  shard_count: z.number().optional(),
});

/** A bot's stats on v0. */
export type BotStats = z.infer<typeof botStatsSchema>;

/** The answer of `GET /bots/:bot_id/check`: 1 when the user voted in the past 12 hours. */
export const voteCheckSchema = z.object({ voted: z.union([z.literal(0), z.literal(1)]) });

/** The answer of `GET /users/:user_id`; optional fields are absent (not null) when unset. */
export const v0UserProfileSchema = z.object({
  /** The platform Snowflake. */
  id: z.string(),
  username: z.string(),
  discriminator: z.string(),
  /** Absent when the user has no custom avatar. */
  avatar: z.string().optional(),
  /** Default avatar hash. */
  defAvatar: z.string(),
  bio: z.string().optional(),
  /** Banner URL. */
  banner: z.string().optional(),
  /** Each link is absent when unset. */
  social: z.object({
    youtube: z.string().optional(),
    reddit: z.string().optional(),
    twitter: z.string().optional(),
    instagram: z.string().optional(),
    github: z.string().optional(),
  }),
  /** A hex string as the user typed it; not guaranteed to be a valid color. */
  color: z.string().optional(),
  supporter: z.boolean(),
  certifiedDev: z.boolean(),
  mod: z.boolean(),
  webMod: z.boolean(),
  admin: z.boolean(),
});

/** A user profile of the v0 API. */
export type V0UserProfile = z.infer<typeof v0UserProfileSchema>;
