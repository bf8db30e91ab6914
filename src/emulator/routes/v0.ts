import { CONTRACT_LIMITS } from '../../contract/limits.js';
import { authenticateV0 } from '../auth.js';
import type { EmulatorContext } from '../context.js';
import type { Reply, RequestContext } from '../http.js';
import { iso } from '../clock.js';
import { empty, fail, json, readJson } from '../http.js';
import { englishHeadline, voteTotals } from '../model.js';
import type { Route } from '../router.js';
import type { EmulatorState, ProjectRecord, UserProfileFields } from '../state.js';
import { findUserByPlatformId } from '../state.js';

/** A bot as v0 answers (the contract's "Bot (v0)" table, in its order). */
interface V0Bot {
  id: string;
  username: string;
  discriminator: string;
  avatar: string | null;
  defAvatar: string | null;
  lib: string;
  prefix: string;
  shortdesc: string;
  longdesc: string | null;
  tags: string[];
  website: string | null;
  support: string | null;
  github: string | null;
  owners: string[];
  guilds: string[];
  invite: string | null;
  date: string;
  server_count: number | null;
  shard_count: number | null;
  certifiedBot: boolean;
  vanity: string | null;
  points: number;
  monthlyPoints: number;
  donationbotguildid: string;
}
type BotField = keyof V0Bot;

const BOT_FIELDS = [
  'id', 'username', 'discriminator', 'avatar', 'defAvatar', 'lib', 'prefix', 'shortdesc', 'longdesc', 'tags',
  'website', 'support', 'github', 'owners', 'guilds', 'invite', 'date', 'server_count', 'shard_count',
  'certifiedBot', 'vanity', 'points', 'monthlyPoints', 'donationbotguildid',
] as const satisfies readonly BotField[];

function isBotField(name: string): name is BotField {
  return (BOT_FIELDS as readonly string[]).includes(name);
}

/** The v0 user profile (the contract's "User profile (v0)" table); optional fields are omitted when unset. */
interface V0UserProfile {
  id: string;
  username: string;
  discriminator: string;
  avatar?: string;
  defAvatar: string;
  bio?: string;
  banner?: string;
  social: UserProfileFields['social'];
  color?: string;
  supporter: boolean;
  certifiedDev: boolean;
  mod: boolean;
  webMod: boolean;
  admin: boolean;
}

/** Counts are int32 on v1 (`server_count`, `shard_count`); v0 shares the same stored stats. */
const MAX_COUNT = 2_147_483_647;
/** Highest shard index accepted, so a stray `shard_id` cannot make the emulator allocate a huge list. */
const MAX_SHARD_ID = 99_999;

function isDiscordBot(project: ProjectRecord): boolean {
  return project.platform === 'discord' && project.type === 'bot';
}

/** Every Discord bot project, in creation order (the v0 API knows only bots). */
function discordBots(state: EmulatorState): ProjectRecord[] {
  return [...state.projects.values()].filter(isDiscordBot);
}

function findBot(state: EmulatorState, botId: string): ProjectRecord | undefined {
  return discordBots(state).find((project) => project.platform_id === botId);
}

function botJson(emu: EmulatorContext, project: ProjectRecord): V0Bot {
  const { state } = emu;
  const managers = [project.owner_user_id, ...project.admin_user_ids].filter((id): id is string => id !== null);
  const owners = [...new Set(managers.map((id) => state.users.get(id)?.platform_id).filter((id) => id !== undefined))];
  const totals = voteTotals(emu, project.id);
  const extras = project.bot;
  return {
    id: project.platform_id,
    username: project.name,
    discriminator: extras.discriminator,
    avatar: extras.avatar,
    defAvatar: extras.defAvatar,
    lib: extras.lib,
    prefix: extras.prefix,
    shortdesc: englishHeadline(project),
    longdesc: project.page_content.en ?? null,
    tags: [...project.tags],
    website: extras.website,
    support: extras.support,
    github: extras.github,
    owners,
    guilds: [...extras.guilds],
    invite: extras.invite,
    date: iso(project.created_at),
    server_count: project.stats.server_count,
    shard_count: project.stats.shard_count,
    certifiedBot: extras.certifiedBot,
    vanity: extras.vanity,
    points: totals.total,
    monthlyPoints: totals.month,
    donationbotguildid: extras.donationbotguildid,
  };
}

// Legacy clients build query strings with empty values, so an empty parameter means "not given".
function queryParam(ctx: RequestContext, name: string): string | undefined {
  const value = ctx.url.searchParams.get(name);
  return value === null || value === '' ? undefined : value;
}

function nonNegativeInteger(ctx: RequestContext, name: string, fallback: number): number {
  const raw = queryParam(ctx, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) fail(400, `${name} must be a whole number, 0 or more (got '${raw}')`);
  return Number(raw);
}

// Null sorts below every value; Snowflake-like digit strings sort numerically; the rest by code units.
function compareValues(a: unknown, b: unknown): number {
  if (a === b) return 0;
  if (a === null || a === undefined) return -1;
  if (b === null || b === undefined) return 1;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  const x = Array.isArray(a) ? a.join(',') : String(a);
  const y = Array.isArray(b) ? b.join(',') : String(b);
  if (/^\d+$/.test(x) && /^\d+$/.test(y) && x.length !== y.length) return x.length - y.length;
  return x < y ? -1 : x > y ? 1 : 0;
}

function listBots(ctx: RequestContext): Reply {
  authenticateV0(ctx, { botRoute: true });
  const limit = Math.min(nonNegativeInteger(ctx, 'limit', CONTRACT_LIMITS.v0BotsListDefaultLimit), CONTRACT_LIMITS.v0BotsListMaxLimit);
  const offset = nonNegativeInteger(ctx, 'offset', 0);
  const sort = queryParam(ctx, 'sort');
  const fieldsParam = queryParam(ctx, 'fields');

  const bots = discordBots(ctx.emu.state).map((project) => botJson(ctx.emu, project));
  if (sort !== undefined) {
    const descending = sort.startsWith('-');
    const field = descending ? sort.slice(1) : sort;
    if (!isBotField(field)) fail(400, `sort: unknown field '${field}'; use one of ${BOT_FIELDS.join(', ')}`);
    // Array.prototype.sort is stable: ties keep creation order in both directions.
    bots.sort((a, b) => (descending ? -1 : 1) * compareValues(a[field], b[field]));
  }
  const requested = (fieldsParam ?? '').split(',').map((name) => name.trim()).filter(isBotField);
  // Unknown names are ignored; when none is known, every field is returned (as with no `fields`).
  const fields: readonly BotField[] = requested.length > 0 ? BOT_FIELDS.filter((f) => requested.includes(f)) : BOT_FIELDS;
  const results = bots.slice(offset, offset + limit).map((bot) => {
    const picked: Partial<Record<BotField, unknown>> = {};
    for (const field of fields) picked[field] = bot[field];
    return picked;
  });
  return json(200, { results, limit, offset, count: results.length, total: bots.length });
}

/**
 * The bot a write or vote check acts on: the token's own bot. `:bot_id` (when the path has one)
 * must name it; the legacy `/bots/stats` and `/bots/check` take it from the token.
 */
function ownBot(ctx: RequestContext, project: ProjectRecord): ProjectRecord {
  if (!isDiscordBot(project)) fail(403, 'Forbidden: this token does not belong to a bot');
  const botId = ctx.params.bot_id;
  if (botId !== undefined && botId !== project.platform_id) {
    fail(403, `Forbidden: this token belongs to bot ${project.platform_id}, not ${botId}`);
  }
  return project;
}

function statsJson(project: ProjectRecord): { server_count?: number; shards: number[]; shard_count?: number } {
  const { server_count, shard_count, shards } = project.stats;
  // The contract's v0 stats have server_count and shard_count "may be absent": unknown is absent, not null.
  return {
    ...(server_count !== null ? { server_count } : {}),
    shards: [...shards],
    ...(shard_count !== null ? { shard_count } : {}),
  };
}

function getStats(ctx: RequestContext): Reply {
  authenticateV0(ctx, { botRoute: true });
  const bot = findBot(ctx.emu.state, ctx.params.bot_id!);
  if (!bot) fail(404, `Not found: no bot ${ctx.params.bot_id}`);
  return json(200, statsJson(bot));
}

/** A v0 stats post as validated (the fields given, nothing else). */
interface V0StatsPost {
  server_count: number | number[];
  shards?: number[];
  shard_id?: number;
  shard_count?: number;
}

function count(value: unknown, field: string, max = MAX_COUNT): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > max) {
    fail(400, `${field} must be an integer from 0 to ${max}`);
  }
  return value;
}

function counts(value: unknown, field: string): number[] {
  if (!Array.isArray(value)) fail(400, `${field} must be an array of integers, 0 or more`);
  if (value.length > MAX_SHARD_ID + 1) fail(400, `${field} has more than ${MAX_SHARD_ID + 1} shards`);
  return value.map((item, index) => count(item, `${field}[${index}]`));
}

function parseStatsPost(body: unknown): V0StatsPost {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) fail(400, 'the body must be a JSON object');
  // Unknown properties are ignored: legacy clients send extras.
  const raw = body as Record<string, unknown>;
  if (raw.server_count === undefined) fail(400, 'server_count is required (a number, or an array of per-shard counts)');
  const post: V0StatsPost = {
    server_count: Array.isArray(raw.server_count) ? counts(raw.server_count, 'server_count') : count(raw.server_count, 'server_count'),
  };
  if (raw.shards !== undefined) post.shards = counts(raw.shards, 'shards');
  if (raw.shard_id !== undefined) post.shard_id = count(raw.shard_id, 'shard_id', MAX_SHARD_ID);
  if (raw.shard_count !== undefined) post.shard_count = count(raw.shard_count, 'shard_count');

  const list = Array.isArray(post.server_count) ? post.server_count : undefined;
  if (list && post.shards && list.join() !== post.shards.join()) {
    fail(400, 'server_count is an array and shards differs from it: send the per-shard counts once');
  }
  const perShard = list ?? post.shards;
  if (post.shard_id !== undefined && perShard) fail(400, 'shard_id goes with a number server_count, not with per-shard counts');
  if (post.shard_count !== undefined) {
    if (post.shard_id !== undefined && post.shard_id >= post.shard_count) fail(400, 'shard_id must be less than shard_count');
    if (perShard && perShard.length > post.shard_count) fail(400, 'shards lists more shards than shard_count');
  }
  return post;
}

/** Applies a validated post to the project's stats (per-shard lists replace, a shard_id sets one shard). */
function applyStats(project: ProjectRecord, post: V0StatsPost): void {
  const stats = project.stats;
  const perShard = Array.isArray(post.server_count) ? post.server_count : post.shards;
  let shards = perShard ? [...perShard] : stats.shards;
  if (!perShard && post.shard_id !== undefined) {
    shards = [...stats.shards];
    while (shards.length <= post.shard_id) shards.push(0);
    shards[post.shard_id] = post.server_count as number;
  }
  // An explicit shard_count is the truth: a bot that resharded down drops the counts of gone shards.
  if (post.shard_count !== undefined && shards.length > post.shard_count) shards = shards.slice(0, post.shard_count);
  const total = perShard || post.shard_id !== undefined ? shards.reduce((sum, n) => sum + n, 0) : (post.server_count as number);
  const shardCount =
    post.shard_count ?? (shards.length > 0 ? Math.max(shards.length, stats.shard_count ?? 0) : stats.shard_count);
  project.stats = { server_count: total, shard_count: shardCount, shards };
}

function postStats(ctx: RequestContext): Reply {
  const bot = ownBot(ctx, authenticateV0(ctx, { botRoute: true }));
  const post = parseStatsPost(readJson(ctx));
  applyStats(bot, post);
  bot.metrics.push({
    source: 'v0',
    applied_at: iso(ctx.emu.clock.now()),
    timestamp: null,
    metrics: { ...post },
  });
  return empty(200);
}

function checkVote(ctx: RequestContext): Reply {
  const bot = ownBot(ctx, authenticateV0(ctx, { botRoute: true }));
  const userId = queryParam(ctx, 'userId');
  if (userId === undefined) fail(400, "userId is required: the voter's Discord ID");
  const now = ctx.emu.clock.now();
  const windowMs = CONTRACT_LIMITS.v0VoteWindowSeconds * 1000;
  const voted = ctx.emu.state.votes.some(
    (vote) =>
      vote.project_id === bot.id && vote.platform_id === userId && vote.created_at <= now && now - vote.created_at < windowMs,
  );
  return json(200, { voted: voted ? 1 : 0 });
}

function userProfile(ctx: RequestContext): Reply {
  authenticateV0(ctx, { botRoute: false });
  const user = findUserByPlatformId(ctx.emu.state, ctx.params.user_id!);
  if (!user) fail(404, 'Not found');
  const p = user.profile;
  const social: UserProfileFields['social'] = {};
  for (const key of ['youtube', 'reddit', 'twitter', 'instagram', 'github'] as const) {
    const value = p.social[key];
    if (typeof value === 'string') social[key] = value;
  }
  const profile: V0UserProfile = {
    id: user.platform_id,
    username: user.username,
    discriminator: p.discriminator,
    ...(user.avatar !== null ? { avatar: user.avatar } : {}),
    defAvatar: p.defAvatar,
    ...(p.bio !== undefined ? { bio: p.bio } : {}),
    ...(p.banner !== undefined ? { banner: p.banner } : {}),
    social,
    ...(p.color !== undefined ? { color: p.color } : {}),
    supporter: p.supporter,
    certifiedDev: p.certifiedDev,
    mod: p.mod,
    webMod: p.webMod,
    admin: p.admin,
  };
  return json(200, profile);
}

/**
 * Legacy v0 (paths relative to `/api`), authenticated with the raw project token:
 * `GET /bots` (limit default 50, clamped to 500; offset default 0; sort; fields), bot stats
 * (`GET`/`POST /bots/:bot_id/stats` and the legacy `POST /bots/stats`), vote check
 * (`GET /bots/:bot_id/check` and the legacy `GET /bots/check`, 12-hour window), and
 * `GET /users/:user_id`. Every `/bots` route counts against the 60/min per-token limit.
 * The legacy two-segment forms have fewer segments than the `:bot_id` forms, so they never clash.
 */
export const v0Routes: Route[] = [
  { method: 'GET', pattern: '/bots', handler: listBots },
  { method: 'POST', pattern: '/bots/stats', handler: postStats },
  { method: 'GET', pattern: '/bots/check', handler: checkVote },
  { method: 'GET', pattern: '/bots/:bot_id/stats', handler: getStats },
  { method: 'POST', pattern: '/bots/:bot_id/stats', handler: postStats },
  { method: 'GET', pattern: '/bots/:bot_id/check', handler: checkVote },
  { method: 'GET', pattern: '/users/:user_id', handler: userProfile },
];
