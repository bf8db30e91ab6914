import { z } from 'zod';
import { ValidationError } from '../../errors.js';
import { SCOPES, type Scope } from '../../contract/limits.js';
import { zodIssues } from '../context.js';
import { redact } from '../redact.js';

/** The project an authorization covers, as the code exchange returns it (a project list item). */
export interface OAuthProject {
  id: string;
  platform_id: string;
  name: string;
  platform: string;
  type: string;
}

/** The tokens of one authorization, in the form sessions and token stores keep. */
export interface OAuthTokens {
  accessToken: string;
  /** Rotates on every refresh: the previous one stops working, so always keep the newest. */
  refreshToken: string;
  /** When the access token expires, epoch milliseconds (the clock at sending time + `expires_in`). */
  expiresAt: number;
  /** The granted scopes (known ones; see {@link parseScopes}). */
  scopes: Scope[];
  /** The granted project: from the code exchange only (a refresh carries it over in a session). */
  project?: OAuthProject | undefined;
}

const projectSchema = z.object({
  id: z.string().min(1),
  platform_id: z.string().min(1),
  name: z.string(),
  // The contract lists the field without closing the set of values on this endpoint, so a new
  // platform must not make a successful exchange look like a failure.
  platform: z.string().min(1),
  type: z.string().min(1),
});

/** The token endpoint's answer (contract: "OAuth token response"). Unknown fields are dropped. */
export const tokenResponseSchema = z.object({
  access_token: z.string().min(1),
  // RFC 6749 7.1: the token type is case-insensitive.
  token_type: z.string().refine((value) => value.toLowerCase() === 'bearer', 'token_type must be Bearer'),
  expires_in: z.number().finite().nonnegative(),
  refresh_token: z.string().min(1),
  scope: z.string(),
  project: projectSchema.optional(),
});

/** What a token store keeps: {@link OAuthTokens} as JSON. */
export const storedTokensSchema = z.object({
  accessToken: z.string().min(1),
  refreshToken: z.string().min(1),
  expiresAt: z.number().finite(),
  scopes: z.array(z.enum(SCOPES)),
  project: projectSchema.optional(),
});

/**
 * The known scopes of a space-separated `scope` string. The contract's catalogue may grow ("beyond
 * these names: not shown"), so a scope this version does not know is left out rather than failing
 * an exchange that the service already completed (its code is spent).
 */
export function parseScopes(scope: string): Scope[] {
  const known = new Set<string>(SCOPES);
  return [...new Set(scope.split(' ').filter((word) => known.has(word)))] as Scope[];
}

/**
 * Checks a token answer and turns it into {@link OAuthTokens}. `sentAt` is the clock reading taken
 * before the request went out, so the computed expiry errs on the early side.
 */
export function tokensFromResponse(operation: string, body: unknown, sentAt: number, secrets: readonly string[]): OAuthTokens {
  const result = tokenResponseSchema.safeParse(body);
  if (!result.success) {
    // The answer may hold fresh tokens: no message may repeat them.
    const shown = [...secrets];
    if (typeof body === 'object' && body !== null) {
      for (const value of Object.values(body)) if (typeof value === 'string') shown.push(value);
    }
    const issues = zodIssues(result.error).map((issue) => ({ ...issue, message: redact(issue.message, shown) }));
    throw new ValidationError('response', `the answer to ${operation}`, issues);
  }
  const data = result.data;
  return {
    accessToken: data.access_token,
    refreshToken: data.refresh_token,
    expiresAt: sentAt + Math.round(data.expires_in * 1000),
    scopes: parseScopes(data.scope),
    ...(data.project ? { project: data.project } : {}),
  };
}
