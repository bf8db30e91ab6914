import type { z } from 'zod';
import type { FieldIssue } from '../../errors.js';
import { CONTRACT_LIMITS, SNOWFLAKE_PATTERN } from '../../contract/limits.js';
import { type ApiContext, type CallOptions, checkRequest } from '../context.js';
import { NotFoundError } from '../errors.js';
import {
  BOT_FIELDS,
  type Bot,
  type BotField,
  type BotsPage,
  botSchema,
  botsPageSchema,
  type BotStats,
  botStatsSchema,
  type V0UserProfile,
  v0UserProfileSchema,
  voteCheckSchema,
} from '../schemas/v0.js';

/** The query of `GET /bots`, checked before sending. */
export interface BotsQuery<F extends BotField = BotField> {
  /** Bots per page: an integer from 1 to 500. Default 50. */
  limit?: number;
  /** Bots to skip before the first: an integer, 0 or more. Default 0. */
  offset?: number;
  /** A {@link BotField}, with `-` first for descending (`-points`). Default: the service's order. */
  sort?: BotField | `-${BotField}`;
  /** Only these fields in each bot (and in its type). Default (absent or empty): every field. */
  fields?: readonly F[];
}

/**
 * A v0 stats post. `serverCount` alone is the total; `shards` are per-shard counts (the total is
 * their sum); `serverCount` with `shardId` is one shard's count. `shardCount` may go with any.
 * Every number is an integer, 0 or more; `shardId` is less than `shardCount` when both are given.
 */
export type V0StatsPost =
  | { serverCount: number; shardId?: number; shardCount?: number; shards?: never }
  | { shards: readonly number[]; shardCount?: number; serverCount?: never; shardId?: never };

/** The wire body of `POST /bots/:bot_id/stats`. */
export interface V0StatsBody {
  server_count: number;
  shards?: number[];
  shard_id?: number;
  shard_count?: number;
}

const isCount = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
const COUNT = 'must be an integer, 0 or more';

/** Every problem of a stats post; empty when it is valid. */
export function v0StatsProblems(stats: V0StatsPost): FieldIssue[] {
  // Read through `unknown`: callers from plain JavaScript can send anything.
  if (typeof stats !== 'object' || stats === null) return [{ path: '', message: 'must be an object: {serverCount} or {shards}' }];
  const raw = stats as unknown as Record<string, unknown>;
  const issues: FieldIssue[] = [];
  const has = (key: string) => raw[key] !== undefined;
  if (has('shards') === has('serverCount')) {
    issues.push({
      path: '',
      message: "give serverCount (a total, or one shard's count with shardId) or shards (per-shard counts), not both",
    });
  }
  if (has('serverCount') && !isCount(raw.serverCount)) issues.push({ path: 'serverCount', message: COUNT });
  if (has('shardCount') && !isCount(raw.shardCount)) issues.push({ path: 'shardCount', message: COUNT });
  if (has('shardId')) {
    if (!isCount(raw.shardId)) issues.push({ path: 'shardId', message: COUNT });
    else if (has('shards')) issues.push({ path: 'shardId', message: 'goes with serverCount (one shard\'s count), not with shards' });
    else if (isCount(raw.shardCount) && raw.shardId >= raw.shardCount) {
      issues.push({ path: 'shardId', message: `must be less than shardCount (${raw.shardCount}): shards are numbered from 0` });
    }
  }
  if (has('shards')) {
    if (!Array.isArray(raw.shards) || raw.shards.length === 0) {
      issues.push({ path: 'shards', message: 'must be a non-empty array of per-shard counts' });
    } else {
      raw.shards.forEach((count, index) => {
        if (!isCount(count)) issues.push({ path: `shards[${index}]`, message: COUNT });
      });
      if (isCount(raw.shardCount) && raw.shards.length > raw.shardCount) {
        issues.push({ path: 'shards', message: `lists ${raw.shards.length} shards; shardCount is ${raw.shardCount}` });
      }
    }
  }
  return issues;
}

/**
 * The wire body of a valid stats post (check it with {@link v0StatsProblems} first). Per-shard
 * counts are sent as `shards` with their sum as `server_count`, so a service that reads only the
 * total still gets the right one.
 */
export function v0StatsBody(stats: V0StatsPost): V0StatsBody {
  const body: V0StatsBody = {
    server_count: stats.shards ? stats.shards.reduce((sum, n) => sum + n, 0) : stats.serverCount,
  };
  if (stats.shards) body.shards = [...stats.shards];
  if (stats.shardId !== undefined) body.shard_id = stats.shardId;
  if (stats.shardCount !== undefined) body.shard_count = stats.shardCount;
  return body;
}

/** Every problem of a `GET /bots` query; empty when it is valid. */
export function botsQueryProblems(query: BotsQuery<BotField>): FieldIssue[] {
  if (typeof query !== 'object' || query === null) return [{ path: '', message: 'must be an object {limit?, offset?, sort?, fields?}' }];
  const issues: FieldIssue[] = [];
  const max = CONTRACT_LIMITS.v0BotsListMaxLimit;
  if (query.limit !== undefined && !(Number.isSafeInteger(query.limit) && query.limit >= 1 && query.limit <= max)) {
    issues.push({ path: 'limit', message: `must be an integer from 1 to ${max}` });
  }
  if (query.offset !== undefined && !isCount(query.offset)) issues.push({ path: 'offset', message: COUNT });
  const known = (name: unknown) => typeof name === 'string' && (BOT_FIELDS as readonly string[]).includes(name);
  if (query.sort !== undefined && !(typeof query.sort === 'string' && known(query.sort.replace(/^-/, '')))) {
    issues.push({ path: 'sort', message: `must be a Bot field, optionally with a leading '-' (${BOT_FIELDS.join(', ')})` });
  }
  if (query.fields !== undefined) {
    if (!Array.isArray(query.fields)) issues.push({ path: 'fields', message: 'must be an array of Bot field names' });
    else query.fields.forEach((name, index) => {
      if (!known(name)) issues.push({ path: `fields[${index}]`, message: `is not a Bot field (${BOT_FIELDS.join(', ')})` });
    });
  }
  return issues;
}

function snowflake(operation: string, field: string, value: string): string {
  checkRequest(
    operation,
    typeof value === 'string' && SNOWFLAKE_PATTERN.test(value) ? [] : [{ path: field, message: 'must be a Snowflake (17 to 20 digits)' }],
  );
  return value;
}

/** The bot a call is about: `botId` when given (checked), else the token's bot. */
function bot(ctx: ApiContext, operation: string, botId: string | undefined): string {
  return botId === undefined ? ctx.v0BotId(operation) : snowflake(operation, 'botId', botId);
}

async function botsPage<F extends BotField = BotField>(
  ctx: ApiContext,
  query: BotsQuery<F> = {},
  options?: CallOptions,
): Promise<BotsPage<Pick<Bot, F>>> {
  const operation = 'v0.bots';
  checkRequest(operation, botsQueryProblems(query));
  const fields = query.fields !== undefined && query.fields.length > 0 ? [...new Set(query.fields)] : undefined;
  // With `fields` the service sends only those: the answer is checked against that pick.
  const result = fields
    ? botSchema.pick(Object.fromEntries(fields.map((name) => [name, true])) as Partial<Record<BotField, true>>)
    : botSchema;
  return ctx.v0({
    operation,
    method: 'GET',
    path: '/bots',
    query: { limit: query.limit, offset: query.offset, sort: query.sort, fields: fields?.join(',') },
    idempotent: true,
    response: botsPageSchema(result) as unknown as z.ZodType<BotsPage<Pick<Bot, F>>>,
    options,
  });
}

async function* bots<F extends BotField = BotField>(
  ctx: ApiContext,
  query: BotsQuery<F> = {},
  options?: CallOptions,
): AsyncGenerator<Pick<Bot, F>, void, undefined> {
  checkRequest('v0.bots', botsQueryProblems(query));
  let offset = query.offset ?? 0;
  for (;;) {
    const page = await botsPage(ctx, { ...query, offset }, options);
    yield* page.results;
    // Counting what came rather than `limit` keeps the walk right if the service clamps the page.
    offset += page.results.length;
    if (page.results.length === 0 || offset >= page.total) return;
  }
}

async function postStats(ctx: ApiContext, stats: V0StatsPost, botId?: string, options?: CallOptions): Promise<void> {
  const operation = 'v0.postStats';
  checkRequest(operation, v0StatsProblems(stats));
  const path = `/bots/${bot(ctx, operation, botId)}/stats`;
  await ctx.v0({ operation, method: 'POST', path, json: v0StatsBody(stats), idempotent: true, options });
}

async function hasVoted(ctx: ApiContext, userId: string, botId?: string, options?: CallOptions): Promise<boolean> {
  const operation = 'v0.hasVoted';
  const user = snowflake(operation, 'userId', userId);
  const path = `/bots/${bot(ctx, operation, botId)}/check`;
  const answer = await ctx.v0({
    operation,
    method: 'GET',
    path,
    query: { userId: user },
    idempotent: true,
    response: voteCheckSchema,
    options,
  });
  return answer.voted === 1;
}

async function user(ctx: ApiContext, userId: string, options?: CallOptions): Promise<V0UserProfile | null> {
  const operation = 'v0.user';
  const path = `/users/${snowflake(operation, 'userId', userId)}`;
  try {
    return await ctx.v0({ operation, method: 'GET', path, idempotent: true, botRoute: false, response: v0UserProfileSchema, options });
  } catch (error) {
    if (error instanceof NotFoundError) return null;
    throw error;
  }
}

/**
 * The legacy v0 operations. Every call goes through the client's 60/min bucket with the raw
 * project token (or `v0Token`). The bot ID defaults to the one in that token.
 */
export function createV0Api(ctx: ApiContext) {
  return {
    /** One page of `GET /bots` as the service sent it. See {@link BotsQuery} for the defaults. */
    botsPage: <F extends BotField = BotField>(query?: BotsQuery<F>, options?: CallOptions): Promise<BotsPage<Pick<Bot, F>>> =>
      botsPage(ctx, query, options),

    /**
     * Every bot from `offset` on, page by page (`limit` per page, default 50), until a page reaches
     * `total` or comes back empty. Each page is one call through the 60/min bucket.
     */
    bots<F extends BotField = BotField>(query?: BotsQuery<F>, options?: CallOptions): AsyncGenerator<Pick<Bot, F>, void, undefined> {
      return bots(ctx, query, options);
    },

    /** A bot's stats (`GET /bots/:bot_id/stats`). `botId` defaults to the token's bot. */
    async getStats(botId?: string, options?: CallOptions): Promise<BotStats> {
      const operation = 'v0.getStats';
      const path = `/bots/${bot(ctx, operation, botId)}/stats`;
      return ctx.v0({ operation, method: 'GET', path, idempotent: true, response: botStatsSchema, options });
    },

    /**
     * Posts the bot's server count (`POST /bots/:bot_id/stats`); see {@link V0StatsPost}. Checked
     * before sending. Retried like an idempotent call: a post overwrites the counts, so sending it
     * twice leaves the same state. `botId` defaults to the token's bot.
     */
    postStats(stats: V0StatsPost, botId?: string, options?: CallOptions): Promise<void> {
      return postStats(ctx, stats, botId, options);
    },

    /**
     * Whether the user (a platform Snowflake) voted for the bot in the past 12 hours
     * (`GET /bots/:bot_id/check`). `botId` defaults to the token's bot.
     */
    hasVoted(userId: string, botId?: string, options?: CallOptions): Promise<boolean> {
      return hasVoted(ctx, userId, botId, options);
    },

    /** A user's v0 profile (`GET /users/:user_id`, a platform Snowflake), or null when none exists (404). */
    user(userId: string, options?: CallOptions): Promise<V0UserProfile | null> {
      return user(ctx, userId, options);
    },
  };
}

/** The legacy v0 operations of a {@link ListingClient}. */
export type V0Api = ReturnType<typeof createV0Api>;
