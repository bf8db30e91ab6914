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
