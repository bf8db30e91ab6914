import { formatBasicAuth } from '../../contract/basic-auth.js';
import { ValidationError, type FieldIssue } from '../../errors.js';
import { codeVerifierProblem } from '../../contract/pkce.js';
import { DEFAULT_BASE_URLS } from '../client.js';
import type { CallOptions } from '../context.js';
import { createTransport, systemClock, type Transport, type TransportClock, type TransportOptions } from '../transport.js';
import { buildAuthorizeUrl, createPkce, parseCallback, type AuthorizeUrlParams, type PkcePair } from './authorize.js';
import { tokensFromResponse, type OAuthTokens } from './tokens.js';

/** How the client proves itself to the token and revoke endpoints (RFC 6749 2.3.1). */
export type ClientAuthMethod = 'basic' | 'form';

/** Options of {@link createOAuthClient}; the transport options apply when no `transport` is given. */
export interface OAuthClientOptions extends TransportOptions {
  /** The application's client ID. */
  clientId: string;
  /** The application's client secret (server side only; it never appears in a message). */
  clientSecret: string;
  /** The registered redirect URI used when a call names none. */
  redirectUri?: string;
  /** Base of the token and revoke endpoints. Default `DEFAULT_BASE_URLS.v1` (`https://top.gg/api/v1`). */
  v1BaseUrl?: string;
  /** Base of the authorization page. Default `DEFAULT_BASE_URLS.auth` (`https://top.gg`). */
  authBaseUrl?: string;
  /** `basic` (default): HTTP Basic; `form`: `client_id` and `client_secret` form fields. */
  clientAuth?: ClientAuthMethod;
  /** A transport to share (it is not closed by {@link OAuthClient.close}). Default: a new one. */
  transport?: Transport;
}

/** What {@link OAuthClient.exchangeCode} takes. */
export interface ExchangeCodeParams {
  /** From {@link OAuthClient.parseCallback}; single use, valid 60 seconds. */
  code: string;
  /** `PkcePair.verifier` of the authorization request. */
  codeVerifier: string;
  /** The redirect URI of the authorization request. Default: the client's `redirectUri`. */
  redirectUri?: string | undefined;
}

/** The OAuth 2.1 (authorization code + PKCE) side of the service, for one application. */
export interface OAuthClient {
  readonly clientId: string;
  /** The clock expiries are computed with (the transport's). */
  readonly clock: TransportClock;
  /** A fresh PKCE pair with a random 64-character verifier. */
  createPkce(): PkcePair;
  /** The authorization URL to send the user to; checked locally (ValidationError). */
  authorizeUrl(params: AuthorizeUrlParams): string;
  /** The code of a callback; OAuthCallbackError on cancel, another error, or a state mismatch. */
  parseCallback(callback: string | URL | URLSearchParams, expectedState: string): { code: string };
  /** Trades a code for tokens (with the granted project). Never retried once sent: a code is single use. */
  exchangeCode(params: ExchangeCodeParams, options?: CallOptions): Promise<OAuthTokens>;
  /**
   * New tokens for a refresh token. The refresh token rotates: the one passed in stops working,
   * so persist the answer before anything else (an `OAuthSession` does). No `project` in the answer.
   */
  refresh(refreshToken: string, options?: CallOptions): Promise<OAuthTokens>;
  /** Revokes a token; with the refresh token the whole authorization and its access tokens end. */
  revoke(token: string, options?: CallOptions): Promise<void>;
  /** Closes the transport when this client created it. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

function requireNonEmpty(operation: string, fields: Record<string, string | undefined>): void {
  const issues: FieldIssue[] = Object.entries(fields)
    .filter(([, value]) => typeof value !== 'string' || value === '')
    .map(([path]) => ({ path, message: 'must be a non-empty string' }));
  if (issues.length > 0) throw new ValidationError('request', `the request of ${operation}`, issues);
}

/** What an OAuth client calls with: the application's credentials and the endpoints. */
interface OAuthClientState {
  readonly clientId: string;
  readonly clientSecret: string;
  /** `Basic base64(id:secret)`. */
  readonly basic: string;
  readonly clientAuth: ClientAuthMethod;
  readonly transport: Transport;
  readonly clock: TransportClock;
  readonly v1BaseUrl: string;
  readonly redirectUri: string | undefined;
}

/** Adds the client credentials the chosen way; with Basic, `client_id` is not repeated in the form. */
function withClient(
  state: OAuthClientState,
  form: Record<string, string>,
): { form: Record<string, string>; headers: Record<string, string> } {
  if (state.clientAuth === 'basic') return { form, headers: { authorization: state.basic } };
  return { form: { ...form, client_id: state.clientId, client_secret: state.clientSecret }, headers: {} };
}

/** The client's own secrets, kept out of every message, with `more`. */
function clientSecrets(state: OAuthClientState, more: readonly string[]): string[] {
  return [state.clientSecret, state.basic.slice('Basic '.length), ...more];
}

async function tokenCall(
  state: OAuthClientState,
  operation: string,
  form: Record<string, string>,
  secrets: string[],
  callOptions?: CallOptions,
): Promise<OAuthTokens> {
  const sentAt = state.clock.now();
  const request = withClient(state, form);
  const allSecrets = clientSecrets(state, secrets);
  const res = await state.transport.send({
    family: 'oauth',
    method: 'POST',
    url: `${state.v1BaseUrl}/oauth2/token`,
    headers: request.headers,
    form: request.form,
    // A code is single use and a refresh rotates: a second send after the first may have
    // arrived would fail with invalid_grant, or worse, revoke what the first one produced.
    idempotent: false,
    secrets: allSecrets,
    signal: callOptions?.signal,
    timeoutMs: callOptions?.timeoutMs,
  });
  return tokensFromResponse(operation, res.body, sentAt, allSecrets);
}

async function exchangeCode(state: OAuthClientState, params: ExchangeCodeParams, callOptions?: CallOptions): Promise<OAuthTokens> {
  const redirectUri = params.redirectUri ?? state.redirectUri;
  requireNonEmpty('oauth.exchangeCode', { code: params.code, codeVerifier: params.codeVerifier, redirectUri });
  if (codeVerifierProblem(params.codeVerifier) !== undefined) {
    throw new ValidationError('request', 'the request of oauth.exchangeCode', [
      { path: 'codeVerifier', message: '43 to 128 characters of A-Z a-z 0-9 - . _ ~ (the verifier of createPkce())' },
    ]);
  }
  return tokenCall(
    state,
    'oauth.exchangeCode',
    { grant_type: 'authorization_code', code: params.code, redirect_uri: redirectUri!, code_verifier: params.codeVerifier },
    [params.code, params.codeVerifier],
    callOptions,
  );
}

async function refresh(state: OAuthClientState, refreshToken: string, callOptions?: CallOptions): Promise<OAuthTokens> {
  requireNonEmpty('oauth.refresh', { refreshToken });
  const tokens = await tokenCall(
    state,
    'oauth.refresh',
    { grant_type: 'refresh_token', refresh_token: refreshToken },
    [refreshToken],
    callOptions,
  );
  // The contract: the project is on the code exchange only.
  delete tokens.project;
  return tokens;
}

async function revoke(state: OAuthClientState, token: string, callOptions?: CallOptions): Promise<void> {
  requireNonEmpty('oauth.revoke', { token });
  const request = withClient(state, { token });
  await state.transport.send({
    family: 'oauth',
    method: 'POST',
    url: `${state.v1BaseUrl}/oauth2/revoke`,
    headers: request.headers,
    form: request.form,
    // Revoking twice ends in the same state (RFC 7009 answers 200 for an unknown token), so a
    // revoke may be sent again after a 5xx or a reset.
    idempotent: true,
    secrets: clientSecrets(state, [token]),
    signal: callOptions?.signal,
    timeoutMs: callOptions?.timeoutMs,
  });
}

/**
 * Creates the OAuth client of one application: PKCE, the authorization URL, the callback, and the
 * token and revoke endpoints (`{v1BaseUrl}/oauth2/token`, `/oauth2/revoke`) through the transport
 * (family `oauth`: RFC 6749 `{error, error_description}` ends up in `ApiError.error` and
 * `.errorDescription`; `invalid_grant` is a BadRequestError, `invalid_client` an UnauthorizedError).
 */
export function createOAuthClient(options: OAuthClientOptions): OAuthClient {
  const { clientId, clientSecret } = options;
  requireNonEmpty('createOAuthClient', { clientId, clientSecret });
  const ownsTransport = options.transport === undefined;
  const state: OAuthClientState = {
    clientId,
    clientSecret,
    basic: formatBasicAuth(clientId, clientSecret),
    clientAuth: options.clientAuth ?? 'basic',
    transport: options.transport ?? createTransport(options),
    clock: options.clock ?? systemClock,
    v1BaseUrl: (options.v1BaseUrl ?? DEFAULT_BASE_URLS.v1).replace(/\/+$/, ''),
    redirectUri: options.redirectUri,
  };
  const authBaseUrl = options.authBaseUrl ?? DEFAULT_BASE_URLS.auth;
  const close = async () => {
    if (ownsTransport) await state.transport.close();
  };

  return {
    clientId,
    clock: state.clock,
    createPkce,
    authorizeUrl: (params) => buildAuthorizeUrl(authBaseUrl, clientId, params, options.redirectUri),
    parseCallback,
    exchangeCode: (params, callOptions) => exchangeCode(state, params, callOptions),
    refresh: (refreshToken, callOptions) => refresh(state, refreshToken, callOptions),
    revoke: (token, callOptions) => revoke(state, token, callOptions),
    close,
    [Symbol.asyncDispose]: close,
  };
}
