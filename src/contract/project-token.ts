import { createHmac, timingSafeEqual } from 'node:crypto';
import { SNOWFLAKE_PATTERN } from './limits.js';

/** The payload of a project token (decisions.md, "Tokens"). */
export interface ProjectTokenPayload {
  /** The project's platform ID; for a bot, its application Snowflake (v0's `:bot_id`). */
  id: string;
  bot: true;
  /** Issued at, in Unix seconds. */
  iat: number;
}

/** Why a string is not a usable project token. */
export type ProjectTokenProblem =
  /** Not three base64url parts, or the payload is not `{id, bot, iat}` JSON. */
  | 'wrong-schema'
  /** The payload's `id` is not a Snowflake. */
  | 'invalid-project-id';

/** The outcome of {@link decodeProjectToken}. */
export type DecodedProjectToken =
  | { ok: true; payload: ProjectTokenPayload; signingInput: string; signature: string }
  | { ok: false; problem: ProjectTokenProblem };

const BASE64URL_PART = /^[A-Za-z0-9_-]+$/;

/**
 * Reads a project token without checking its signature (only the service can). Clients use it to
 * fill v0's `:bot_id`; the emulator uses it before checking the signature.
 */
export function decodeProjectToken(token: string): DecodedProjectToken {
  const parts = token.split('.');
  if (parts.length !== 3 || !parts.every((part) => BASE64URL_PART.test(part))) {
    return { ok: false, problem: 'wrong-schema' };
  }
  const [header, body, signature] = parts as [string, string, string];
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  } catch {
    return { ok: false, problem: 'wrong-schema' };
  }
  if (
    typeof payload !== 'object' || payload === null || Array.isArray(payload) ||
    typeof (payload as Record<string, unknown>).id !== 'string' ||
    (payload as Record<string, unknown>).bot !== true ||
    typeof (payload as Record<string, unknown>).iat !== 'number'
  ) {
    return { ok: false, problem: 'wrong-schema' };
  }
  const { id, iat } = payload as { id: string; iat: number };
  if (!SNOWFLAKE_PATTERN.test(id)) return { ok: false, problem: 'invalid-project-id' };
  return { ok: true, payload: { id, bot: true, iat }, signingInput: `${header}.${body}`, signature };
}

/**
 * The project's platform ID a project token names (its payload's `id`: for a bot, its application
 * Snowflake), or undefined when `token` is not a readable project token. Read without checking
 * the signature: the receiver compares it with what a delivery names, before the service answered.
 */
export function projectTokenPlatformId(token: string | undefined): string | undefined {
  if (typeof token !== 'string') return undefined;
  const decoded = decodeProjectToken(token.trim());
  return decoded.ok ? decoded.payload.id : undefined;
}

/** Where a project token is found, for messages. */
const PROJECT_TOKEN_PLACE = "the project's Integrations and API settings on the listing";

/**
 * Whether `token` is a Discord bot token: three parts whose first is a Discord user ID (17 to 20
 * digits) in base64, as Discord writes them; a project token's first part is a JSON header.
 */
function isDiscordBotToken(token: string): boolean {
  const parts = token.split('.');
  if (parts.length !== 3 || !/^[A-Za-z0-9_-]+={0,2}$/.test(parts[0]!)) return false;
  return /^\d{17,20}$/.test(Buffer.from(parts[0]!, 'base64').toString('latin1'));
}

/**
 * Why `token` cannot be sent to the service as the project token, or undefined when it can be: a
 * `Bearer ` prefix (the client adds it on v1 and v0 takes the token raw), a Discord bot token
 * (which is never sent there), or not three parts separated by dots. Messages never quote it.
 */
export function projectTokenProblem(token: string): string | undefined {
  if (/^bearer\s/i.test(token.trim())) {
    return 'starts with "Bearer ": give the project token alone, without the prefix (the agent adds it where the service wants it)';
  }
  if (isDiscordBotToken(token.trim())) {
    const bot = "is a Discord bot token (its first part is the bot's user ID), not the project token";
    const copy = `copy the project token from ${PROJECT_TOKEN_PLACE} (the bot token belongs in discord.token)`;
    return `${bot}, so it is not sent to the listing service: ${copy}`;
  }
  if (token.split('.').length !== 3) return `must be a project token (three parts separated by dots): copy it from ${PROJECT_TOKEN_PLACE}`;
  return undefined;
}

const JWT_HEADER = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url');

function hmac(key: string, input: string): string {
  return createHmac('sha256', key).update(input).digest('base64url');
}

/** Issues a project token signed with `signingKey` (what the service does; the emulator uses it). */
export function issueProjectToken(signingKey: string, platformId: string, issuedAtSeconds: number): string {
  const body = Buffer.from(JSON.stringify({ id: platformId, bot: true, iat: issuedAtSeconds })).toString('base64url');
  const signingInput = `${JWT_HEADER}.${body}`;
  return `${signingInput}.${hmac(signingKey, signingInput)}`;
}

/** True when a decoded token's signature was made with `signingKey`; constant time. */
export function projectTokenSignatureValid(
  signingKey: string,
  decoded: { signingInput: string; signature: string },
): boolean {
  const expected = Buffer.from(hmac(signingKey, decoded.signingInput));
  const actual = Buffer.from(decoded.signature);
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}
