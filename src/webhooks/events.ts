import { platformIdProblem, snowflakeProblem, voteFieldsProblem, type VoteFieldProblem } from '../contract/vote-fields.js';

/**
 * The events of signed (v1) and legacy (v0) webhook deliveries (decisions.md), and hand-written
 * shape checks for them. Hand-written rather than zod because they run on every delivery of the
 * receiver's hot path, and they rebuild each value from its known fields only, so nothing the
 * sender adds (or an attacker smuggles in, like `__proto__`) reaches the hooks.
 */

/** `project` of an event payload. */
export interface WebhookProject {
  /** The service's project ID. */
  id: string;
  /** `bot`, `server`, `game`, `game_server`, ... (kept open for new types). */
  type: string;
  /** `discord`, `roblox`, `minecraft`, ... (kept open for new platforms). */
  platform: string;
  /** The project's ID on its platform (the bot's application Snowflake). */
  platform_id: string;
}

/** `user` of an event payload. */
export interface WebhookUser {
  /** The service's user ID (the vote key uses it). */
  id: string;
  /** The user's ID on the platform (their Discord Snowflake). */
  platform_id: string;
  name: string;
  /** `null` when the user has no avatar (also when the field is absent). */
  avatar_url: string | null;
}

/** `data` of `vote.create`. */
export interface VoteCreateData {
  /** The vote's ID (retries repeat it: deduplicate on it or on the vote key). */
  id: string;
  weight: number;
  /** ISO 8601. */
  created_at: string;
  /** ISO 8601. */
  expires_at: string;
  project: WebhookProject;
  user: WebhookUser;
}

/** `data` of `webhook.test`. */
export interface WebhookTestData {
  project: WebhookProject;
  user: WebhookUser;
}

/** `data` of `integration.create`: answer 200 `{ webhook_url, routes }` and store the secret. */
export interface IntegrationCreateData {
  connection_id: string;
  /** The new webhook secret (`whs_...`); never log it. */
  webhook_secret: string;
  project: WebhookProject;
  user: WebhookUser;
}

/** `data` of `integration.delete`. */
export interface IntegrationDeleteData {
  connection_id: string;
}

/** A verified v1 event; switch on `type`. */
export type WebhookEvent =
  | { type: 'vote.create'; data: VoteCreateData }
  | { type: 'webhook.test'; data: WebhookTestData }
  | { type: 'integration.create'; data: IntegrationCreateData }
  | { type: 'integration.delete'; data: IntegrationDeleteData };

/** The `type` of every v1 event this library understands. */
export type WebhookEventType = WebhookEvent['type'];

/**
 * Why a body is not an event: not a JSON `{ type, data }` of the right shape, a type we do not
 * know, or a vote whose fields break the contract's rules (`VOTE_FIELD_LIMITS`: IDs, weight, times).
 */
type EventBodyFailure = 'malformed_body' | 'unknown_event' | 'invalid_vote';

/** A body refused: why, and for `invalid_vote` the field and the rule it breaks. */
export interface EventBodyRefusal {
  ok: false;
  reason: EventBodyFailure;
  problem?: VoteFieldProblem;
}

/** A legacy (v0) vote for a bot. */
export interface LegacyBotVote {
  bot: string;
  user: string;
  type: 'upvote' | 'test';
  /** Sent for bots only; absent when the sender left it out. */
  isWeekend?: boolean;
  /** The URL query string of the vote page (`?a=1&b=2`), when there was one. */
  query?: string;
}

/** A legacy (v0) vote for a server (guild). */
export interface LegacyGuildVote {
  guild: string;
  user: string;
  type: 'upvote' | 'test';
  query?: string;
}

/** A legacy (v0) vote: exactly one of `bot` and `guild` is set. */
export type LegacyVote = LegacyBotVote | LegacyGuildVote;

type Json = Record<string, unknown>;
type Checked<T> = T | VoteFieldProblem | undefined;
type Check<T> = (value: unknown) => T | undefined;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function id(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

const project: Check<WebhookProject> = (value) => {
  if (!isObject(value)) return undefined;
  const out = { id: id(value.id), type: id(value.type), platform: id(value.platform), platform_id: id(value.platform_id) };
  return out.id && out.type && out.platform && out.platform_id ? (out as WebhookProject) : undefined;
};

const user: Check<WebhookUser> = (value) => {
  if (!isObject(value)) return undefined;
  const { avatar_url: avatar, name } = value;
  if (avatar !== undefined && avatar !== null && typeof avatar !== 'string') return undefined;
  if (typeof name !== 'string') return undefined;
  const out = { id: id(value.id), platform_id: id(value.platform_id), name, avatar_url: avatar ?? null };
  return out.id && out.platform_id ? (out as WebhookUser) : undefined;
};

/** The names of a `vote.create`'s fields, for the problems. */
const VOTE_CREATE_NAMES = {
  userId: 'data.user.id',
  platformId: 'data.user.platform_id',
  weight: 'data.weight',
  createdAt: 'data.created_at',
  expiresAt: 'data.expires_at',
  voteId: 'data.id',
};

/**
 * The rules of `VOTE_FIELD_LIMITS` a well-shaped `vote.create` breaks first (its `created_at`
 * against a clock aside); its times as `Date.parse` read them already (read once per delivery).
 */
function voteCreateProblem(data: VoteCreateData, createdMs: number, expiresMs: number): VoteFieldProblem | undefined {
  const values = { userId: data.user.id, platformId: data.user.platform_id, weight: data.weight, createdMs, expiresMs, voteId: data.id };
  return (
    voteFieldsProblem(values, VOTE_CREATE_NAMES) ??
    snowflakeProblem('data.project.id', data.project.id) ??
    platformIdProblem('data.project.platform_id', data.project.platform_id)
  );
}

/** `Date.parse` of a string, NaN for anything else (not a time). */
const timeOf = (value: unknown): number => (typeof value === 'string' ? Date.parse(value) : Number.NaN);

const voteCreate = (data: unknown): Checked<VoteCreateData> => {
  if (!isObject(data)) return undefined;
  const weight = data.weight;
  if (typeof weight !== 'number') return undefined;
  const createdMs = timeOf(data.created_at);
  const expiresMs = timeOf(data.expires_at);
  const out = {
    id: id(data.id),
    weight,
    created_at: Number.isNaN(createdMs) ? undefined : (data.created_at as string),
    expires_at: Number.isNaN(expiresMs) ? undefined : (data.expires_at as string),
    project: project(data.project),
    user: user(data.user),
  };
  if (!(out.id && out.created_at && out.expires_at && out.project && out.user)) return undefined;
  return voteCreateProblem(out as VoteCreateData, createdMs, expiresMs) ?? (out as VoteCreateData);
};

const webhookTest: Check<WebhookTestData> = (data) => {
  if (!isObject(data)) return undefined;
  const out = { project: project(data.project), user: user(data.user) };
  return out.project && out.user ? (out as WebhookTestData) : undefined;
};

const integrationCreate: Check<IntegrationCreateData> = (data) => {
  if (!isObject(data)) return undefined;
  const out = {
    connection_id: id(data.connection_id),
    webhook_secret: id(data.webhook_secret),
    project: project(data.project),
    user: user(data.user),
  };
  return out.connection_id && out.webhook_secret && out.project && out.user ? (out as IntegrationCreateData) : undefined;
};

const integrationDelete: Check<IntegrationDeleteData> = (data) => {
  if (!isObject(data)) return undefined;
  const connection = id(data.connection_id);
  return connection ? { connection_id: connection } : undefined;
};

// Fatal: a body that is not UTF-8 is malformed, not silently repaired into U+FFFD.
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Parses JSON from raw bytes or text; undefined when it is not UTF-8 JSON. */
export function parseJson(rawBody: Uint8Array | string): { value: unknown } | undefined {
  try {
    const text = typeof rawBody === 'string' ? rawBody : utf8.decode(rawBody);
    return { value: JSON.parse(text) as unknown };
  } catch {
    return undefined;
  }
}

const isProblem = (checked: unknown): checked is VoteFieldProblem => typeof checked === 'object' && checked !== null && 'reason' in checked;

/**
 * Checks an already-parsed JSON value against the v1 event shapes of decisions.md, and a
 * `vote.create`'s fields against the contract's rules (`invalid_vote`, with the problem). Extra
 * fields are dropped; `avatar_url` defaults to `null`. Never throws.
 */
export function toWebhookEvent(value: unknown): { ok: true; event: WebhookEvent } | EventBodyRefusal {
  if (!isObject(value) || typeof value.type !== 'string' || !isObject(value.data)) return { ok: false, reason: 'malformed_body' };
  const { type, data } = value;
  let event: WebhookEvent | undefined;
  switch (type) {
    case 'vote.create': {
      const checked = voteCreate(data);
      if (isProblem(checked)) return { ok: false, reason: 'invalid_vote', problem: checked };
      event = checked && { type, data: checked };
      break;
    }
    case 'webhook.test': {
      const checked = webhookTest(data);
      event = checked && { type, data: checked };
      break;
    }
    case 'integration.create': {
      const checked = integrationCreate(data);
      event = checked && { type, data: checked };
      break;
    }
    case 'integration.delete': {
      const checked = integrationDelete(data);
      event = checked && { type, data: checked };
      break;
    }
    default:
      return { ok: false, reason: 'unknown_event' };
  }
  return event ? { ok: true, event } : { ok: false, reason: 'malformed_body' };
}

/**
 * Checks an already-parsed JSON value against the legacy vote shape of decisions.md:
 * `{ bot | guild, user, type: 'upvote' | 'test', isWeekend?, query? }`, and an upvote's IDs (the
 * voter's and the bot's or guild's Discord Snowflakes: `invalid_vote`, with the problem). Never throws.
 */
export function toLegacyVote(value: unknown): { ok: true; vote: LegacyVote } | EventBodyRefusal {
  if (!isObject(value)) return { ok: false, reason: 'malformed_body' };
  const { type, isWeekend, query } = value;
  const userId = id(value.user);
  const bot = id(value.bot);
  const guild = id(value.guild);
  // Exactly one target: a body naming both a bot and a guild cannot be routed honestly.
  if (!userId || (bot === undefined) === (guild === undefined)) return { ok: false, reason: 'malformed_body' };
  if (value.bot !== undefined && bot === undefined) return { ok: false, reason: 'malformed_body' };
  if (value.guild !== undefined && guild === undefined) return { ok: false, reason: 'malformed_body' };
  if (isWeekend !== undefined && typeof isWeekend !== 'boolean') return { ok: false, reason: 'malformed_body' };
  if (query !== undefined && typeof query !== 'string') return { ok: false, reason: 'malformed_body' };
  if (typeof type !== 'string') return { ok: false, reason: 'malformed_body' };
  if (type !== 'upvote' && type !== 'test') return { ok: false, reason: 'unknown_event' };
  // An upvote becomes a vote: its IDs are Discord Snowflakes (a test is only logged).
  const target = bot === undefined ? { field: 'guild', id: guild } : { field: 'bot', id: bot };
  const problem = type === 'upvote' ? (snowflakeProblem('user', userId) ?? snowflakeProblem(target.field, target.id)) : undefined;
  if (problem !== undefined) return { ok: false, reason: 'invalid_vote', problem };
  const rest = query === undefined ? {} : { query };
  if (bot !== undefined) {
    return { ok: true, vote: { bot, user: userId, type, ...(isWeekend === undefined ? {} : { isWeekend }), ...rest } };
  }
  if (guild !== undefined) return { ok: true, vote: { guild, user: userId, type, ...rest } };
  return { ok: false, reason: 'malformed_body' };
}
