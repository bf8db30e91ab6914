/**
 * OAuth 2.1 for the listing service: authorization code with PKCE (S256), token exchange,
 * refresh with rotation, revocation, and a session that refreshes its access token by itself.
 *
 * ```ts
 * const oauth = createOAuthClient({ clientId, clientSecret, redirectUri });
 * const pkce = oauth.createPkce();
 * const state = randomUUID();
 * redirect(oauth.authorizeUrl({ scopes: ['project.votes.read'], state, codeChallenge: pkce.challenge }));
 * // ... at the redirect URI:
 * const { code } = oauth.parseCallback(request.url, state);
 * const tokens = await oauth.exchangeCode({ code, codeVerifier: pkce.verifier });
 * const store = createFileTokenStore('./tokens.json');
 * await store.save(tokens);
 * const session = createOAuthSession({ oauth, tokens, tokenStore: store });
 * const client = createListingClient({ accessToken: session });
 * ```
 *
 * Defaults: `clientAuth` `basic`; `v1BaseUrl` `DEFAULT_BASE_URLS.v1`; `authBaseUrl`
 * `DEFAULT_BASE_URLS.auth`; a session refreshes 60 s (`refreshSkewMs`) before expiry.
 */
export {
  buildAuthorizeUrl,
  createPkce,
  parseCallback,
  pkceFromVerifier,
  redirectUriProblem,
  type AuthorizeUrlParams,
  type PkcePair,
} from './authorize.js';
export { formatBasicAuth } from '../../contract/basic-auth.js';
export {
  createOAuthClient,
  type ClientAuthMethod,
  type ExchangeCodeParams,
  type OAuthClient,
  type OAuthClientOptions,
} from './client.js';
export { OAuthCallbackError, type OAuthCallbackProblem } from './errors.js';
export {
  createOAuthSession,
  TokenPersistenceError,
  type OAuthSession,
  type OAuthSessionOptions,
} from './session.js';
export { createFileTokenStore, createMemoryTokenStore, type TokenStore } from './token-store.js';
export { parseScopes, tokenResponseSchema, type OAuthProject, type OAuthTokens } from './tokens.js';
