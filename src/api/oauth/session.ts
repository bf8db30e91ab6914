import { ListingAgentError } from '../../errors.js';
import type { AccessTokenProvider } from '../credentials.js';
import { CredentialError } from '../errors.js';
import type { OAuthClient } from './client.js';
import type { TokenStore } from './token-store.js';
import type { OAuthTokens } from './tokens.js';

/** Options of {@link createOAuthSession}. */
export interface OAuthSessionOptions {
  /** The client that refreshes and revokes. */
  oauth: OAuthClient;
  /** The tokens to start with (from `exchangeCode`, or a token store's `load()`). */
  tokens: OAuthTokens;
  /** Receives every rotated set of tokens; awaited before the refreshed token is handed out. */
  tokenStore?: TokenStore;
  /** Called with every rotated set of tokens (before `tokenStore.save`); awaited likewise. */
  onTokens?: (tokens: OAuthTokens) => void | Promise<void>;
  /** Refresh when the access token expires within this many ms. Default 60 000. */
  refreshSkewMs?: number;
  /** Default: the OAuth client's clock. */
  clock?: { now(): number };
}

/** An access token that refreshes itself; pass it as `accessToken` to `createListingClient`. */
export interface OAuthSession extends AccessTokenProvider {
  /** The current access token, refreshed first when it expires within `refreshSkewMs`. */
  getAccessToken(signal?: AbortSignal): Promise<string>;
  /** The granted project's ID (from the code exchange; kept across refreshes). */
  readonly projectId: string | undefined;
  /** A copy of the current tokens. */
  readonly tokens: OAuthTokens;
  /** The current access and refresh tokens, for redaction. */
  secrets(): string[];
  /** Refreshes now (shared with any refresh already running) and returns the new tokens. */
  refresh(signal?: AbortSignal): Promise<OAuthTokens>;
  /** Revokes the refresh token (the whole authorization); the session is unusable afterwards. */
  revoke(signal?: AbortSignal): Promise<void>;
}

/** The rotated tokens could not be handed to `onTokens` or the token store. */
export class TokenPersistenceError extends ListingAgentError {
  constructor(cause: unknown) {
    super(
      'oauth_token_persistence',
      'The refreshed OAuth tokens could not be saved (onTokens or tokenStore.save failed). They are kept in memory and ' +
        'saving is tried again on the next call; if the process ends first, the user must authorize again.',
      { cause },
    );
  }
}

function copyTokens(tokens: OAuthTokens): OAuthTokens {
  return { ...tokens, scopes: [...tokens.scopes], ...(tokens.project ? { project: { ...tokens.project } } : {}) };
}

/** Waits for `promise`, or rejects early when the caller's signal aborts (the promise runs on). */
function raceSignal<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  signal.throwIfAborted();
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/**
 * An OAuth session over one authorization.
 *
 * Refresh tokens rotate: once the service answers a refresh, the old refresh token is dead and the
 * new one exists only in this process. So a refresh resolves only after `onTokens` and then
 * `tokenStore.save` have completed with the new tokens; a crash after that loses nothing. When
 * saving fails, the new tokens stay in memory (so this process keeps working), the call rejects
 * with a {@link TokenPersistenceError}, and the next call saves again before anything else.
 *
 * Concurrent callers share one refresh (single flight), because a second refresh with the same
 * refresh token would fail with `invalid_grant`. Only one session (one process) should own a
 * given refresh token. A refresh that fails with `invalid_grant` (a `BadRequestError`) means the
 * authorization is gone: the user must authorize again.
 */
export function createOAuthSession(options: OAuthSessionOptions): OAuthSession {
  const { oauth, tokenStore, onTokens } = options;
  const skewMs = options.refreshSkewMs ?? 60_000;
  const clock = options.clock ?? oauth.clock;
  let current = copyTokens(options.tokens);
  let unsaved: OAuthTokens | undefined;
  let revoked = false;
  let inflight: Promise<OAuthTokens> | undefined;

  async function persist(tokens: OAuthTokens): Promise<void> {
    try {
      await onTokens?.(copyTokens(tokens));
      await tokenStore?.save(copyTokens(tokens));
    } catch (error) {
      unsaved = tokens;
      throw new TokenPersistenceError(error);
    }
    if (unsaved === tokens) unsaved = undefined;
  }

  async function runRefresh(): Promise<OAuthTokens> {
    // Saving failed last time: the live refresh token is still only in memory. Save it first.
    if (unsaved) await persist(unsaved);
    const fresh = await oauth.refresh(current.refreshToken);
    const next: OAuthTokens = { ...fresh, ...(current.project ? { project: current.project } : {}) };
    // Switch at once: the old refresh token is already dead, whatever happens to the save.
    current = next;
    unsaved = next;
    await persist(next);
    return next;
  }

  /** One refresh at a time; every caller that arrives meanwhile waits for the same one. */
  function sharedRefresh(): Promise<OAuthTokens> {
    inflight ??= runRefresh().finally(() => {
      inflight = undefined;
    });
    return inflight;
  }

  /** Joins a running refresh, saves unsaved tokens, or refreshes when the token is near expiry. */
  function sharedRefreshIfNeeded(): Promise<OAuthTokens> {
    if (inflight) return inflight;
    if (current.expiresAt - clock.now() > skewMs) {
      if (!unsaved) return Promise.resolve(current);
      const pending = unsaved;
      inflight = persist(pending)
        .then(() => current)
        .finally(() => {
          inflight = undefined;
        });
      return inflight;
    }
    return sharedRefresh();
  }

  function ensureLive(): void {
    if (revoked) throw new CredentialError('this OAuth session was revoked: the user must authorize the application again');
  }

  return {
    async getAccessToken(signal) {
      ensureLive();
      signal?.throwIfAborted();
      if (!inflight && !unsaved && current.expiresAt - clock.now() > skewMs) return current.accessToken;
      const tokens = await raceSignal(sharedRefreshIfNeeded(), signal);
      return tokens.accessToken;
    },
    get projectId() {
      return current.project?.id;
    },
    get tokens() {
      return copyTokens(current);
    },
    secrets() {
      return [current.accessToken, current.refreshToken];
    },
    async refresh(signal) {
      ensureLive();
      return copyTokens(await raceSignal(sharedRefresh(), signal));
    },
    async revoke(signal) {
      // A refresh in flight would rotate the token we are about to revoke: revoke its result.
      if (inflight) await inflight.catch(() => undefined);
      await oauth.revoke(current.refreshToken, signal ? { signal } : {});
      revoked = true;
    },
  };
}
