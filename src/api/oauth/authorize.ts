import { createHash, timingSafeEqual } from 'node:crypto';
import { ValidationError, type FieldIssue } from '../../errors.js';
import { PLATFORM_TYPES, SCOPES, type Platform, type Scope } from '../../contract/limits.js';
import { codeVerifierProblem, createCodeVerifier, isS256Challenge, PKCE_METHOD, s256Challenge } from '../../contract/pkce.js';
import { OAuthCallbackError } from './errors.js';

/** A PKCE pair (RFC 7636). Keep `verifier` secret until the code exchange; send `challenge`. */
export interface PkcePair {
  verifier: string;
  challenge: string;
  method: typeof PKCE_METHOD;
}

/** 48 random bytes are 64 base64url characters: well inside 43..128, and 384 bits of entropy. */
const VERIFIER_BYTES = 48;

/** The PKCE pair of a given verifier; a ValidationError when the verifier breaks RFC 7636 4.1. */
export function pkceFromVerifier(verifier: string): PkcePair {
  const problem = codeVerifierProblem(verifier);
  if (problem) {
    throw new ValidationError('request', 'the PKCE code verifier', [
      {
        path: 'codeVerifier',
        message: problem === 'length' ? 'must be 43 to 128 characters' : 'may hold only A-Z a-z 0-9 - . _ ~',
      },
    ]);
  }
  return { verifier, challenge: s256Challenge(verifier), method: PKCE_METHOD };
}

/** A fresh PKCE pair: a random 64-character verifier (base64url is a subset of RFC 7636's alphabet). */
export function createPkce(): PkcePair {
  return pkceFromVerifier(createCodeVerifier(VERIFIER_BYTES));
}

/** What {@link buildAuthorizeUrl} puts in the authorization request. */
export interface AuthorizeUrlParams {
  /** At least one; sent space-separated (`+` in the URL). */
  scopes: readonly Scope[];
  /** An opaque per-request value; keep it to compare in {@link parseCallback}. */
  state: string;
  /** `PkcePair.challenge`. */
  codeChallenge: string;
  /** Default: the OAuth client's `redirectUri`. Must be exactly one of the registered URIs. */
  redirectUri?: string | undefined;
  /** Preselects a project on the consent screen. */
  projectId?: string | undefined;
  /** The platform of `platformId`. */
  platform?: Platform | undefined;
  /** Preselects a project by its ID on the platform; unknown IDs are ignored by the service. */
  platformId?: string | undefined;
}

function loopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

/** The contract's rule for redirect URIs: absolute https (http on loopback), no fragment. */
export function redirectUriProblem(uri: string): string | undefined {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'must be an absolute URL';
  }
  if (uri.includes('#')) return 'must not have a fragment';
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:' && loopback(url.hostname)) return undefined;
  return 'must be https (http only on a loopback address)';
}

function authorizeIssues(params: AuthorizeUrlParams, redirectUri: string | undefined): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const known = new Set<string>(SCOPES);
  if (!Array.isArray(params.scopes) || params.scopes.length === 0) {
    issues.push({ path: 'scopes', message: 'request at least one scope' });
  } else {
    params.scopes.forEach((scope, index) => {
      if (!known.has(scope)) issues.push({ path: `scopes[${index}]`, message: `unknown scope ${JSON.stringify(scope)}` });
    });
  }
  if (typeof params.state !== 'string' || params.state === '') {
    issues.push({ path: 'state', message: 'send an opaque, non-empty per-request value' });
  }
  if (typeof params.codeChallenge !== 'string' || !isS256Challenge(params.codeChallenge)) {
    issues.push({ path: 'codeChallenge', message: 'must be an S256 challenge: 43 base64url characters (use createPkce())' });
  }
  if (redirectUri === undefined || redirectUri === '') {
    issues.push({ path: 'redirectUri', message: 'give redirectUri here or to createOAuthClient' });
  } else {
    const problem = redirectUriProblem(redirectUri);
    if (problem) issues.push({ path: 'redirectUri', message: problem });
  }
  if (params.projectId !== undefined && params.projectId === '') issues.push({ path: 'projectId', message: 'must not be empty' });
  if (params.platformId !== undefined && params.platformId === '') issues.push({ path: 'platformId', message: 'must not be empty' });
  if (params.platform !== undefined) {
    if (!(params.platform in PLATFORM_TYPES))
      issues.push({ path: 'platform', message: `unknown platform ${JSON.stringify(params.platform)}` });
    if (params.platformId === undefined)
      issues.push({ path: 'platform', message: 'names the platform of platformId: give platformId too' });
  }
  return issues;
}

/**
 * The authorization URL `{authBaseUrl}/oauth2/authorize` with every parameter of the contract's
 * table, in its order. Checked locally first (ValidationError, subject `request`) because the
 * service answers most mistakes with a redirect the user would only see in the browser.
 */
export function buildAuthorizeUrl(authBaseUrl: string, clientId: string, params: AuthorizeUrlParams, defaultRedirectUri?: string): string {
  const redirectUri = params.redirectUri ?? defaultRedirectUri;
  const issues = authorizeIssues(params, redirectUri);
  if (clientId === '') issues.unshift({ path: 'clientId', message: 'must not be empty' });
  if (issues.length > 0) throw new ValidationError('request', 'the authorization request', issues);
  const url = new URL(`${authBaseUrl.replace(/\/+$/, '')}/oauth2/authorize`);
  const query: [string, string | undefined][] = [
    ['client_id', clientId],
    ['response_type', 'code'],
    ['redirect_uri', redirectUri],
    ['scope', [...new Set(params.scopes)].join(' ')],
    ['state', params.state],
    ['code_challenge', params.codeChallenge],
    ['code_challenge_method', PKCE_METHOD],
    ['project_id', params.projectId],
    ['platform', params.platform],
    ['platform_id', params.platformId],
  ];
  for (const [key, value] of query) if (value !== undefined) url.searchParams.set(key, value);
  return url.toString();
}

/** Compares digests in constant time so a forged callback learns nothing about the expected state. */
function sameState(given: string, expected: string): boolean {
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

function callbackQuery(callback: string | URL | URLSearchParams): URLSearchParams {
  if (callback instanceof URLSearchParams) return callback;
  if (callback instanceof URL) return callback.searchParams;
  try {
    return new URL(callback).searchParams;
  } catch {
    // Not an absolute URL: take it as the query part alone (`?code=...&state=...`).
    return new URLSearchParams(callback.slice(callback.indexOf('?') + 1));
  }
}

/**
 * Reads the redirect back from the authorization page. The state is checked first (RFC 6749
 * 10.12): a callback with a foreign state is rejected whatever else it says. Then `error`
 * (`access_denied` when the user cancelled) and finally the single `code`.
 */
export function parseCallback(callback: string | URL | URLSearchParams, expectedState: string): { code: string } {
  if (expectedState === '') {
    throw new ValidationError('request', 'parseCallback', [
      { path: 'expectedState', message: 'give the state sent in the authorization URL' },
    ]);
  }
  const query = callbackQuery(callback);
  const states = query.getAll('state');
  if (states.length !== 1 || !sameState(states[0]!, expectedState)) throw new OAuthCallbackError('state_mismatch');
  const errors = query.getAll('error');
  if (errors.length > 0) {
    const description = query.get('error_description') ?? undefined;
    const error = errors[0]!;
    throw new OAuthCallbackError(error === 'access_denied' ? 'access_denied' : 'authorization_error', error, description);
  }
  const codes = query.getAll('code');
  if (codes.length !== 1 || codes[0] === '') throw new OAuthCallbackError('malformed');
  return { code: codes[0]! };
}
