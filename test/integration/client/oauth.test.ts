import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createListingClient } from '../../../src/api/client.js';
import { createApiContext } from '../../../src/api/context.js';
import { BadRequestError, UnauthorizedError } from '../../../src/api/errors.js';
import { createTransport } from '../../../src/api/transport.js';
import {
  createMemoryTokenStore,
  createOAuthClient,
  createOAuthSession,
  OAuthCallbackError,
  type ClientAuthMethod,
  type OAuthClient,
  type OAuthTokens,
} from '../../../src/api/oauth/index.js';
import type { Scope } from '../../../src/contract/limits.js';
import { createFakeClock, type FakeClock } from '../../helpers/client.js';
import { startTestEmulator, type TestEmulator } from '../../helpers/emulator.js';
import { call } from '../../helpers/http.js';
import { rejection } from '../../helpers/rejection.js';

const REDIRECT = 'http://127.0.0.1:1/callback';
const BASE = Date.parse('2026-03-04T10:00:00Z');
const SCOPES: Scope[] = ['user.identify', 'project.information.read', 'project.votes.read'];
const WEEK_S = 604_800;

interface Fixture {
  emu: TestEmulator;
  clock: FakeClock;
  ownerId: string;
  projectId: string;
  clientId: string;
  clientSecret: string;
  oauth: OAuthClient;
}

const clients: OAuthClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

/** An emulator on a fixed clock, an owner with one bot, an application, and a client for it. */
async function fixture(options: { clientAuth?: ClientAuthMethod; clientSecret?: string } = {}): Promise<Fixture> {
  const emu = await startTestEmulator({ now: () => BASE });
  const clock = createFakeClock(BASE);
  const owner = emu.admin.createUser({ username: 'owner' });
  const { project } = emu.admin.createProject({ platform: 'discord', type: 'bot', owner_user_id: owner.id, name: 'OAuth Bot' });
  const app = emu.admin.createApplication({ redirect_uris: [REDIRECT] });
  const oauth = createOAuthClient({
    clientId: app.client_id,
    clientSecret: options.clientSecret ?? app.client_secret,
    redirectUri: REDIRECT,
    v1BaseUrl: emu.urls.v1,
    authBaseUrl: emu.urls.auth,
    clock,
    ...(options.clientAuth ? { clientAuth: options.clientAuth } : {}),
  });
  clients.push(oauth);
  return { emu, clock, ownerId: owner.id, projectId: project.id, clientId: app.client_id, clientSecret: app.client_secret, oauth };
}

/** Runs the browser part with the emulator's `login_as`/`decision` shortcut; returns the callback URL. */
async function authorize(f: Fixture, state: string, challenge: string, decision = 'approve'): Promise<string> {
  const url = f.oauth.authorizeUrl({ scopes: SCOPES, state, codeChallenge: challenge, projectId: f.projectId });
  const res = await call(`${url}&login_as=${f.ownerId}&decision=${decision}`, { redirect: 'manual' });
  expect(res.status).toBe(302);
  return res.headers.get('location')!;
}

/** The whole flow: PKCE, authorize, callback, code exchange. */
async function authorizeAndExchange(f: Fixture): Promise<{ tokens: OAuthTokens; code: string; verifier: string }> {
  const pkce = f.oauth.createPkce();
  const location = await authorize(f, 'state-1', pkce.challenge);
  const { code } = f.oauth.parseCallback(location, 'state-1');
  const tokens = await f.oauth.exchangeCode({ code, codeVerifier: pkce.verifier });
  return { tokens, code, verifier: pkce.verifier };
}

function expectNoSecret(error: Error, secrets: string[]) {
  for (const secret of secrets) {
    expect(String(error)).not.toContain(secret);
    expect(error.message).not.toContain(secret);
  }
}

const tokenCalls = (emu: TestEmulator) => emu.admin.requests().filter((r) => r.method === 'POST' && r.path.endsWith('/oauth2/token'));

describe.each<ClientAuthMethod>(['basic', 'form'])('OAuth flow with %s client authentication', (clientAuth) => {
  it('authorizes, exchanges the code, and the token reaches the API', async () => {
    const f = await fixture({ clientAuth });
    const { tokens } = await authorizeAndExchange(f);
    expect(tokens.expiresAt).toBe(BASE + WEEK_S * 1000);
    expect(tokens.scopes).toEqual(SCOPES);
    expect(tokens.project).toMatchObject({ id: f.projectId, platform: 'discord', type: 'bot', name: 'OAuth Bot' });

    const me = await call(`${f.emu.urls.v1}/users/@me`, { bearer: tokens.accessToken });
    expect(me.status).toBe(200);
    expect(me.body.id).toBe(f.ownerId);

    const projects = await call(`${f.emu.urls.v1}/projects`, { bearer: tokens.accessToken });
    expect(projects.body.projects.map((p: { id: string }) => p.id)).toEqual([f.projectId]);
  });
});

describe('OAuth client against the emulator', () => {
  it('gives the listing client a session as its access token provider', async () => {
    const f = await fixture();
    const { tokens } = await authorizeAndExchange(f);
    const session = createOAuthSession({ oauth: f.oauth, tokens });
    expect(session.projectId).toBe(f.projectId);

    const client = createListingClient({ accessToken: session, v1BaseUrl: f.emu.urls.v1, clock: f.clock });
    expect(client.credentialKind).toBe('oauth');
    // `users.me` arrives with the users module; until then the context below covers the provider.
    const users = client.users as { me?: () => Promise<{ id: string }> };
    if (typeof users.me === 'function') expect((await users.me()).id).toBe(f.ownerId);
    await client.close();

    // The modules on top of the context are written elsewhere; the context is what uses the provider.
    const ctx = createApiContext({
      credential: { kind: 'oauth', accessToken: session },
      v1BaseUrl: f.emu.urls.v1,
      v0BaseUrl: f.emu.urls.v0,
      transport: createTransport({ clock: f.clock }),
      clock: f.clock,
      validateResponses: true,
    });
    const me = await ctx.v1({
      operation: 'users.me',
      method: 'GET',
      path: '/users/@me',
      idempotent: true,
      response: z.object({ id: z.string() }),
    });
    expect(me.id).toBe(f.ownerId);
    expect(ctx.secrets()).toEqual(expect.arrayContaining([tokens.accessToken, tokens.refreshToken]));
    await ctx.transport.close();
  });

  it('rotates refresh tokens: the old one is invalid_grant afterwards', async () => {
    const f = await fixture();
    const { tokens } = await authorizeAndExchange(f);
    const refreshed = await f.oauth.refresh(tokens.refreshToken);
    expect(refreshed.refreshToken).not.toBe(tokens.refreshToken);
    expect(refreshed.accessToken).not.toBe(tokens.accessToken);
    expect(refreshed).not.toHaveProperty('project');
    expect(refreshed.scopes).toEqual(SCOPES);

    const error = await rejection(f.oauth.refresh(tokens.refreshToken));
    expect(error).toBeInstanceOf(BadRequestError);
    expect((error as BadRequestError).error).toBe('invalid_grant');
    expect(error.message).toMatch(/authorization again/);
    expectNoSecret(error, [tokens.refreshToken, refreshed.refreshToken, f.clientSecret]);
    expect((await call(`${f.emu.urls.v1}/users/@me`, { bearer: refreshed.accessToken })).status).toBe(200);
  });

  it('refuses a code twice and a wrong verifier, without secrets in the message', async () => {
    const f = await fixture();
    const { code, verifier, tokens } = await authorizeAndExchange(f);
    const replay = await rejection(f.oauth.exchangeCode({ code, codeVerifier: verifier }));
    expect(replay).toBeInstanceOf(BadRequestError);
    expect((replay as BadRequestError).error).toBe('invalid_grant');
    expect(tokenCalls(f.emu)).toHaveLength(2);
    expectNoSecret(replay, [code, verifier, f.clientSecret, tokens.accessToken, tokens.refreshToken]);

    const pkce = f.oauth.createPkce();
    const next = f.oauth.parseCallback(await authorize(f, 's2', pkce.challenge), 's2');
    const otherVerifier = f.oauth.createPkce().verifier;
    const mismatch = await rejection(f.oauth.exchangeCode({ code: next.code, codeVerifier: otherVerifier }));
    expect((mismatch as BadRequestError).error).toBe('invalid_grant');
    expectNoSecret(mismatch, [next.code, otherVerifier, pkce.verifier, f.clientSecret]);
  });

  it('reports a cancelled authorization and a foreign state', async () => {
    const f = await fixture();
    const pkce = f.oauth.createPkce();
    const cancelled = await authorize(f, 'state-c', pkce.challenge, 'cancel');
    const error = (() => {
      try {
        f.oauth.parseCallback(cancelled, 'state-c');
      } catch (e) {
        return e as OAuthCallbackError;
      }
      throw new Error('expected an error');
    })();
    expect(error).toBeInstanceOf(OAuthCallbackError);
    expect(error.problem).toBe('access_denied');

    const approved = await authorize(f, 'state-a', pkce.challenge);
    expect(() => f.oauth.parseCallback(approved, 'state-b')).toThrow(OAuthCallbackError);
  });

  it('refreshes once, shortly before expiry, for concurrent callers and persists first', async () => {
    const f = await fixture();
    const { tokens } = await authorizeAndExchange(f);
    const store = createMemoryTokenStore(tokens);
    const events: string[] = [];
    const session = createOAuthSession({
      oauth: f.oauth,
      tokens,
      refreshSkewMs: 60_000,
      onTokens: async (next) => {
        await new Promise((resolve) => setImmediate(resolve));
        events.push(`onTokens ${next.refreshToken === tokens.refreshToken ? 'old' : 'new'}`);
      },
      tokenStore: {
        load: () => store.load(),
        save: async (next) => {
          await new Promise((resolve) => setImmediate(resolve));
          await store.save(next);
          events.push('saved');
        },
      },
    });

    // Two minutes before expiry: outside the skew, no refresh.
    f.clock.advance((WEEK_S - 120) * 1000);
    f.emu.admin.advanceClock(WEEK_S - 120);
    expect(await session.getAccessToken()).toBe(tokens.accessToken);
    expect(tokenCalls(f.emu)).toHaveLength(1);

    // Thirty seconds before expiry: inside the skew.
    f.clock.advance(90_000);
    f.emu.admin.advanceClock(90);
    const results = await Promise.all(
      Array.from({ length: 5 }, () => session.getAccessToken().then((token) => (events.push('resolved'), token))),
    );
    expect(tokenCalls(f.emu)).toHaveLength(2);
    expect(new Set(results).size).toBe(1);
    expect(results[0]).not.toBe(tokens.accessToken);
    expect(events).toEqual(['onTokens new', 'saved', 'resolved', 'resolved', 'resolved', 'resolved', 'resolved']);
    const saved = await store.load();
    expect(saved?.accessToken).toBe(results[0]);
    expect(saved?.refreshToken).toBe(session.tokens.refreshToken);
    expect(saved?.project?.id).toBe(f.projectId);
    expect(session.tokens.expiresAt).toBe(f.clock.now() + WEEK_S * 1000);

    // The new token works; the emulator agrees that time has passed.
    expect((await call(`${f.emu.urls.v1}/users/@me`, { bearer: results[0]! })).status).toBe(200);
    f.emu.admin.advanceClock(60);
    expect((await call(`${f.emu.urls.v1}/users/@me`, { bearer: tokens.accessToken })).status).toBe(401);
  });

  it('revokes: the access token is 401 afterwards', async () => {
    const f = await fixture({ clientAuth: 'form' });
    const { tokens } = await authorizeAndExchange(f);
    const session = createOAuthSession({ oauth: f.oauth, tokens });
    expect((await call(`${f.emu.urls.v1}/users/@me`, { bearer: tokens.accessToken })).status).toBe(200);
    await session.revoke();
    expect((await call(`${f.emu.urls.v1}/users/@me`, { bearer: tokens.accessToken })).status).toBe(401);
    const error = await rejection(f.oauth.refresh(tokens.refreshToken));
    expect((error as BadRequestError).error).toBe('invalid_grant');
  });

  it('revokes with Basic authentication too', async () => {
    const f = await fixture();
    const { tokens } = await authorizeAndExchange(f);
    await f.oauth.revoke(tokens.refreshToken);
    expect((await call(`${f.emu.urls.v1}/projects`, { bearer: tokens.accessToken })).status).toBe(401);
  });

  it.each<ClientAuthMethod>(['basic', 'form'])('a wrong client secret is invalid_client (%s), without the secret', async (clientAuth) => {
    const wrongSecret = 'cs_wrong_secret_value_123';
    const f = await fixture({ clientAuth, clientSecret: wrongSecret });
    const pkce = f.oauth.createPkce();
    const { code } = f.oauth.parseCallback(await authorize(f, 's', pkce.challenge), 's');
    const error = await rejection(f.oauth.exchangeCode({ code, codeVerifier: pkce.verifier }));
    expect(error).toBeInstanceOf(UnauthorizedError);
    expect((error as UnauthorizedError).error).toBe('invalid_client');
    expectNoSecret(error, [wrongSecret, f.clientSecret, code, pkce.verifier]);
    expect(JSON.stringify(error)).not.toContain(wrongSecret);
  });
});
