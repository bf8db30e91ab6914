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

/** What a session holds: its options, the current tokens, and the refresh in flight. */
interface SessionState {
  readonly options: OAuthSessionOptions;
  readonly skewMs: number;
  readonly clock: { now(): number };
  current: OAuthTokens;
  /** Tokens not yet handed to `onTokens` and the token store (a save failed). */
  unsaved: OAuthTokens | undefined;
  revoked: boolean;
  inflight: Promise<OAuthTokens> | undefined;
}

/** Whether the access token is good for more than `refreshSkewMs`. */
function fresh(state: SessionState): boolean {
  return state.current.expiresAt - state.clock.now() > state.skewMs;
}

async function persist(state: SessionState, tokens: OAuthTokens): Promise<void> {
  const { onTokens, tokenStore } = state.options;
  try {
    await onTokens?.(copyTokens(tokens));
    await tokenStore?.save(copyTokens(tokens));
  } catch (error) {
    state.unsaved = tokens;
    throw new TokenPersistenceError(error);
  }
  if (state.unsaved === tokens) state.unsaved = undefined;
}

async function runRefresh(state: SessionState): Promise<OAuthTokens> {
  // Saving failed last time: the live refresh token is still only in memory. Save it first.
  if (state.unsaved) await persist(state, state.unsaved);
  const refreshed = await state.options.oauth.refresh(state.current.refreshToken);
  const next: OAuthTokens = { ...refreshed, ...(state.current.project ? { project: state.current.project } : {}) };
  // Switch at once: the old refresh token is already dead, whatever happens to the save.
  state.current = next;
  state.unsaved = next;
  await persist(state, next);
  return next;
}

/** One refresh at a time; every caller that arrives meanwhile waits for the same one. */
function sharedRefresh(state: SessionState): Promise<OAuthTokens> {
  state.inflight ??= runRefresh(state).finally(() => {
    state.inflight = undefined;
  });
  return state.inflight;
}

/** Joins a running refresh, saves unsaved tokens, or refreshes when the token is near expiry. */
function sharedRefreshIfNeeded(state: SessionState): Promise<OAuthTokens> {
  if (state.inflight) return state.inflight;
  if (fresh(state)) {
    if (!state.unsaved) return Promise.resolve(state.current);
    const pending = state.unsaved;
    state.inflight = persist(state, pending)
      .then(() => state.current)
      .finally(() => {
        state.inflight = undefined;
      });
    return state.inflight;
  }
  return sharedRefresh(state);
}

function ensureLive(state: SessionState): void {
  if (state.revoked) throw new CredentialError('this OAuth session was revoked: the user must authorize the application again');
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
  const state: SessionState = {
    options,
    skewMs: options.refreshSkewMs ?? 60_000,
    clock: options.clock ?? options.oauth.clock,
    current: copyTokens(options.tokens),
    unsaved: undefined,
    revoked: false,
    inflight: undefined,
  };

  return {
    async getAccessToken(signal) {
      ensureLive(state);
      signal?.throwIfAborted();
      if (!state.inflight && !state.unsaved && fresh(state)) return state.current.accessToken;
      const tokens = await raceSignal(sharedRefreshIfNeeded(state), signal);
      return tokens.accessToken;
    },
    get projectId() {
      return state.current.project?.id;
    },
    get tokens() {
      return copyTokens(state.current);
    },
    secrets() {
      return [state.current.accessToken, state.current.refreshToken];
    },
    async refresh(signal) {
      ensureLive(state);
      return copyTokens(await raceSignal(sharedRefresh(state), signal));
    },
    async revoke(signal) {
      // A refresh in flight would rotate the token we are about to revoke: revoke its result.
      if (state.inflight) await state.inflight.catch(() => undefined);
      await options.oauth.revoke(state.current.refreshToken, signal ? { signal } : {});
      state.revoked = true;
    },
  };
}
