import { z } from 'zod';
import { PLATFORM_TYPES, SCOPES } from '../contract/limits.js';

const platform = z.enum(Object.keys(PLATFORM_TYPES) as ['discord', 'roblox', 'minecraft']);
const projectType = z.enum(['bot', 'server', 'game', 'game_server']);
const isoDate = z.string().refine((s) => !Number.isNaN(Date.parse(s)), 'must be an ISO 8601 date');

/** A user in a seed fixture or `POST /_emulator/users`. */
export const seedUserSchema = z.object({
  id: z.string().regex(/^\d{1,20}$/).optional(),
  username: z.string().min(1).max(64),
  platform_id: z.string().regex(/^\d{17,20}$/, 'must be a Snowflake').optional(),
  avatar: z.string().nullable().optional(),
  /** v0 profile fields (bio, banner, color, social, supporter, certifiedDev, mod, webMod, admin, ...). */
  profile: z
    .object({
      discriminator: z.string(),
      defAvatar: z.string(),
      bio: z.string(),
      banner: z.string(),
      color: z.string(),
      social: z.object({
        youtube: z.string(),
        reddit: z.string(),
        twitter: z.string(),
        instagram: z.string(),
        github: z.string(),
      }).partial(),
      supporter: z.boolean(),
      certifiedDev: z.boolean(),
      mod: z.boolean(),
      webMod: z.boolean(),
      admin: z.boolean(),
    })
    .partial()
    .optional(),
});

/** A project in a seed fixture or `POST /_emulator/projects`. */
export const seedProjectSchema = z
  .object({
    id: z.string().regex(/^\d{1,20}$/).optional(),
    platform,
    type: projectType,
    platform_id: z.string().min(1).max(100).optional(),
    name: z.string().min(1).max(100).optional(),
    owner_user_id: z.string().optional(),
    admin_user_ids: z.array(z.string()).optional(),
    headline: z.record(z.string(), z.string()).optional(),
    page_content: z.record(z.string(), z.string()).optional(),
    /** v0 bot fields the emulator cannot derive (lib, prefix, website, support, invite, ...). */
    bot: z
      .object({
        discriminator: z.string(),
        avatar: z.string().nullable(),
        defAvatar: z.string().nullable(),
        lib: z.string(),
        prefix: z.string(),
        website: z.string().nullable(),
        support: z.string().nullable(),
        github: z.string().nullable(),
        guilds: z.array(z.string()),
        invite: z.string().nullable(),
        certifiedBot: z.boolean(),
        vanity: z.string().nullable(),
        donationbotguildid: z.string(),
      })
      .partial()
      .optional(),
    tags: z.array(z.string()).optional(),
    review_status: z.string().optional(),
  })
  .refine((p) => (PLATFORM_TYPES[p.platform] as readonly string[]).includes(p.type), {
    message: 'type does not fit the platform (discord: bot or server; roblox: game; minecraft: game_server)',
    path: ['type'],
  })
  .refine((p) => p.platform !== 'discord' || p.platform_id === undefined || /^\d{17,20}$/.test(p.platform_id), {
    message: 'a Discord platform_id must be a Snowflake (17 to 20 digits)',
    path: ['platform_id'],
  });

/** A vote in a seed fixture or `POST /_emulator/votes`. */
export const seedVoteSchema = z.object({
  project_id: z.string(),
  user_id: z.string(),
  weight: z.number().int().min(1).max(100).optional(),
  created_at: isoDate.optional(),
});

const redirectUri = z.string().refine((value) => {
  try {
    const url = new URL(value);
    if (url.hash !== '' || value.includes('#')) return false;
    if (url.protocol === 'https:') return true;
    return url.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
  } catch {
    return false;
  }
}, 'must be an absolute https URL (or http on loopback) without a fragment');

/** An application in a seed fixture or `POST /_emulator/applications`. */
export const seedApplicationSchema = z.object({
  client_id: z.string().min(1).optional(),
  client_secret: z.string().min(1).optional(),
  redirect_uris: z.array(redirectUri).min(1).max(10),
  application_token: z.string().min(1).optional(),
});

/** An integration in a seed fixture or `POST /_emulator/integrations`. */
export const seedIntegrationSchema = z.object({
  id: z.string().optional(),
  name: z.string().min(1),
  description: z.string().default(''),
  icon_url: z.string().default(''),
  /** Where the handshake and `integration.delete` are sent. */
  url: z.string().url(),
});

/** A live authorization in a seed fixture (skips the browser flow). */
export const seedAuthorizationSchema = z.object({
  client_id: z.string(),
  user_id: z.string(),
  project_id: z.string(),
  scopes: z.array(z.enum(SCOPES)).min(1),
});

/** A fixture for `--seed FILE` and `POST /_emulator/reset`. IDs may be given to make tests stable. */
export const seedSchema = z.object({
  users: z.array(seedUserSchema).default([]),
  projects: z.array(seedProjectSchema).default([]),
  votes: z.array(seedVoteSchema).default([]),
  applications: z.array(seedApplicationSchema).default([]),
  integrations: z.array(seedIntegrationSchema).default([]),
  authorizations: z.array(seedAuthorizationSchema).default([]),
});

/** What a seed file holds (as written). */
export type EmulatorSeed = z.input<typeof seedSchema>;

/** The fixture used when none is given: one owner, one Discord bot, one application. */
export const DEFAULT_SEED: EmulatorSeed = {
  users: [{ id: '1000000000000000001', username: 'demo-owner', platform_id: '200000000000000001' }],
  projects: [
    {
      id: '1000000000000000010',
      platform: 'discord',
      type: 'bot',
      platform_id: '300000000000000001',
      name: 'Demo Bot',
      owner_user_id: '1000000000000000001',
    },
  ],
  applications: [
    {
      client_id: 'demo-client',
      client_secret: 'demo-client-secret',
      redirect_uris: ['http://127.0.0.1:8976/callback'],
    },
  ],
};
