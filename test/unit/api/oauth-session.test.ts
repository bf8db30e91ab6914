import { describe, expect, it } from 'vitest';
import { CredentialError } from '../../../src/api/errors.js';
import {
  createMemoryTokenStore,
  createOAuthSession,
  TokenPersistenceError,
  type OAuthClient,
  type OAuthTokens,
} from '../../../src/api/oauth/index.js';
import { createFakeClock } from '../../helpers/client.js';

const HOUR = 3_600_000;
const PROJECT = { id: 'p1', platform_id: '200000000000000002', name: 'Bot', platform: 'discord', type: 'bot' };

function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** An OAuth client whose refreshes wait until `release()`; records refresh and revoke calls. */
function fakeOAuth(start = 0) {
  const clock = createFakeClock(start);
  const refreshed: string[] = [];
  const revoked: string[] = [];
  let gate = deferred<void>();
  let counter = 0;
  const oauth = {
    clientId: 'c',
    clock,
    refresh: async (refreshToken: string) => {
      refreshed.push(refreshToken);
      await gate.promise;
      counter += 1;
      return { accessToken: `at${counter}`, refreshToken: `rt${counter}`, expiresAt: clock.now() + 7 * 24 * HOUR, scopes: ['user.identify'] };
    },
    revoke: async (token: string) => {
      revoked.push(token);
    },
  } as unknown as OAuthClient;
  return {
    oauth,
    clock,
    refreshed,
    revoked,
    release: () => gate.resolve(),
    fail: (error: unknown) => gate.reject(error),
    reset: () => {
      gate = deferred<void>();
    },
  };
}

const initial = (expiresAt: number): OAuthTokens => ({
  accessToken: 'at0',
  refreshToken: 'rt0',
  expiresAt,
  scopes: ['user.identify'],
  project: PROJECT,
});

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('createOAuthSession', () => {
  it('hands out the current token while it is far from expiry', async () => {
    const fake = fakeOAuth();
    const session = createOAuthSession({ oauth: fake.oauth, tokens: initial(2 * HOUR) });
    expect(await session.getAccessToken()).toBe('at0');
    expect(session.projectId).toBe('p1');
    expect(session.secrets()).toEqual(['at0', 'rt0']);
    expect(fake.refreshed).toEqual([]);
  });

  it('refreshes once for concurrent callers within the skew and saves before resolving', async () => {
    const fake = fakeOAuth();
    const store = createMemoryTokenStore();
    const order: string[] = [];
    const saveGate = deferred<void>();
    const session = createOAuthSession({
      oauth: fake.oauth,
      tokens: initial(HOUR),
      refreshSkewMs: 5 * 60_000,
      onTokens: async (tokens) => {
        order.push(`onTokens ${tokens.refreshToken}`);
        await saveGate.promise;
        order.push('onTokens done');
      },
      tokenStore: {
        load: () => store.load(),
        save: async (tokens) => {
          order.push(`save ${tokens.refreshToken}`);
          await store.save(tokens);
        },
      },
    });
    fake.clock.advance(HOUR - 5 * 60_000 - 1);
    expect(await session.getAccessToken()).toBe('at0');
    fake.clock.advance(1);
    const calls = Array.from({ length: 5 }, () => session.getAccessToken().then((token) => (order.push('resolved'), token)));
    await flush();
    fake.release();
    await flush();
    expect(order).toEqual(['onTokens rt1']);
    saveGate.resolve();
    expect(await Promise.all(calls)).toEqual(['at1', 'at1', 'at1', 'at1', 'at1']);
    expect(order.slice(0, 3)).toEqual(['onTokens rt1', 'onTokens done', 'save rt1']);
    expect(fake.refreshed).toEqual(['rt0']);
    expect(await store.load()).toMatchObject({ accessToken: 'at1', refreshToken: 'rt1', project: PROJECT });
    expect(session.projectId).toBe('p1');
    expect(session.tokens.refreshToken).toBe('rt1');
    expect(await session.getAccessToken()).toBe('at1');
    expect(fake.refreshed).toHaveLength(1);
  });

  it('shares a forced refresh with getAccessToken and other forced refreshes', async () => {
    const fake = fakeOAuth();
    const session = createOAuthSession({ oauth: fake.oauth, tokens: initial(HOUR) });
    const forced = [session.refresh(), session.refresh()];
    const token = session.getAccessToken();
    fake.release();
    const [first, second] = await Promise.all(forced);
    expect(first).toEqual(second);
    expect(first?.refreshToken).toBe('rt1');
    expect(await token).toBe('at1');
    expect(fake.refreshed).toEqual(['rt0']);
  });

  it('passes a failed refresh to every waiter and tries again on the next call', async () => {
    const fake = fakeOAuth();
    const session = createOAuthSession({ oauth: fake.oauth, tokens: initial(0) });
    const calls = [session.getAccessToken(), session.getAccessToken()];
    fake.fail(new Error('boom'));
    for (const call of calls) await expect(call).rejects.toThrow('boom');
    fake.reset();
    const next = session.getAccessToken();
    fake.release();
    expect(await next).toBe('at1');
    expect(fake.refreshed).toEqual(['rt0', 'rt0']);
  });

  it('keeps rotated tokens when saving fails and saves them again on the next call', async () => {
    const fake = fakeOAuth();
    fake.release();
    let failures = 1;
    const saved: string[] = [];
    const session = createOAuthSession({
      oauth: fake.oauth,
      tokens: initial(0),
      tokenStore: {
        load: async () => undefined,
        save: async (tokens) => {
          if (failures-- > 0) throw new Error(`disk full (${tokens.refreshToken})`);
          saved.push(tokens.refreshToken);
        },
      },
    });
    const error = await session.getAccessToken().catch((e: unknown) => e as Error);
    expect(error).toBeInstanceOf(TokenPersistenceError);
    expect(String(error)).not.toContain('rt1');
    expect(session.tokens.refreshToken).toBe('rt1');
    expect(await session.getAccessToken()).toBe('at1');
    expect(saved).toEqual(['rt1']);
    expect(fake.refreshed).toEqual(['rt0']);
  });

  it('lets a caller give up without cancelling the shared refresh', async () => {
    const fake = fakeOAuth();
    const session = createOAuthSession({ oauth: fake.oauth, tokens: initial(0) });
    const controller = new AbortController();
    const abandoned = session.getAccessToken(controller.signal);
    const patient = session.getAccessToken();
    controller.abort(new Error('gave up'));
    await expect(abandoned).rejects.toThrow('gave up');
    fake.release();
    expect(await patient).toBe('at1');
    expect(fake.refreshed).toHaveLength(1);
  });

  it('revokes the newest refresh token, after a refresh in flight', async () => {
    const fake = fakeOAuth();
    const session = createOAuthSession({ oauth: fake.oauth, tokens: initial(0) });
    const pending = session.getAccessToken();
    const revoking = session.revoke();
    await flush();
    expect(fake.revoked).toEqual([]);
    fake.release();
    await pending;
    await revoking;
    expect(fake.revoked).toEqual(['rt1']);
    await expect(session.getAccessToken()).rejects.toBeInstanceOf(CredentialError);
  });

  it('uses the clock it is given over the client\'s', async () => {
    const fake = fakeOAuth();
    const clock = createFakeClock(0);
    const session = createOAuthSession({ oauth: fake.oauth, tokens: initial(HOUR), clock });
    fake.clock.advance(2 * HOUR);
    expect(await session.getAccessToken()).toBe('at0');
    clock.advance(HOUR);
    const next = session.getAccessToken();
    fake.release();
    expect(await next).toBe('at1');
  });
});
