import { MockAgent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { ValidationError } from '../../../src/errors.js';
import { BadRequestError, ServerError, UnauthorizedError } from '../../../src/api/errors.js';
import { formatBasicAuth, createOAuthClient, type ClientAuthMethod } from '../../../src/api/oauth/index.js';
import { createFakeClock } from '../../helpers/client.js';
import { rejection } from '../../helpers/rejection.js';

const ORIGIN = 'https://svc.example';
const CLIENT_SECRET = 'cs_super_secret_value';
const CODE = 'lac_the_single_use_code';
const VERIFIER = 'v'.repeat(64);
const REFRESH = 'lrt_refresh_token_value';
const NEW_ACCESS = 'lat_new_access_token';
const NEW_REFRESH = 'lrt_new_refresh_token';
const PROJECT = { id: '100000000000000001', platform_id: '200000000000000002', name: 'Bot', platform: 'discord', type: 'bot' };

interface Seen {
  path: string;
  headers: Record<string, string>;
  form: Record<string, string>;
}

const agents: MockAgent[] = [];
afterEach(async () => {
  await Promise.all(agents.splice(0).map((agent) => agent.close()));
});

function headerRecord(headers: unknown): Record<string, string> {
  if (headers instanceof Headers) return Object.fromEntries(headers);
  return Object.fromEntries(Object.entries((headers ?? {}) as Record<string, string>).map(([k, v]) => [k.toLowerCase(), String(v)]));
}

/** A client over a MockAgent; `replies` answer the calls in order and every call is recorded. */
function setup(replies: { status: number; body?: unknown }[], clientAuth?: ClientAuthMethod) {
  const agent = new MockAgent();
  agent.disableNetConnect();
  agents.push(agent);
  const seen: Seen[] = [];
  const pool = agent.get(ORIGIN);
  for (const reply of replies) {
    pool.intercept({ path: /^\/api\/v1\/oauth2\//, method: 'POST' }).reply((opts) => {
      seen.push({ path: opts.path, headers: headerRecord(opts.headers), form: Object.fromEntries(new URLSearchParams(String(opts.body))) });
      return {
        statusCode: reply.status,
        data: reply.body === undefined ? '' : JSON.stringify(reply.body),
        responseOptions: { headers: { 'content-type': 'application/json' } },
      };
    });
  }
  const clock = createFakeClock(1_000_000);
  const oauth = createOAuthClient({
    clientId: 'client-1',
    clientSecret: CLIENT_SECRET,
    redirectUri: 'https://bot.example/cb',
    v1BaseUrl: `${ORIGIN}/api/v1`,
    dispatcher: agent,
    clock,
    ...(clientAuth ? { clientAuth } : {}),
  });
  return { oauth, seen, clock };
}

const tokenBody = (extra: Record<string, unknown> = {}) => ({
  access_token: NEW_ACCESS,
  token_type: 'Bearer',
  expires_in: 604800,
  refresh_token: NEW_REFRESH,
  scope: 'project.votes.read user.identify',
  ...extra,
});

function expectNoSecret(error: Error) {
  for (const secret of [CLIENT_SECRET, CODE, VERIFIER, REFRESH, NEW_ACCESS, NEW_REFRESH]) {
    expect(String(error)).not.toContain(secret);
    expect(error.message).not.toContain(secret);
  }
}

describe('createOAuthClient token calls', () => {
  it('exchanges a code with HTTP Basic by default and maps the answer', async () => {
    const { oauth, seen } = setup([{ status: 200, body: tokenBody({ project: PROJECT, extra_field: 1 }) }]);
    const tokens = await oauth.exchangeCode({ code: CODE, codeVerifier: VERIFIER });
    expect(seen).toHaveLength(1);
    expect(seen[0]!.path).toBe('/api/v1/oauth2/token');
    expect(seen[0]!.headers.authorization).toBe(formatBasicAuth('client-1', CLIENT_SECRET));
    expect(seen[0]!.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(seen[0]!.form).toEqual({
      grant_type: 'authorization_code',
      code: CODE,
      redirect_uri: 'https://bot.example/cb',
      code_verifier: VERIFIER,
    });
    expect(tokens).toEqual({
      accessToken: NEW_ACCESS,
      refreshToken: NEW_REFRESH,
      expiresAt: 1_000_000 + 604_800_000,
      scopes: ['project.votes.read', 'user.identify'],
      project: PROJECT,
    });
  });

  it('sends the client credentials as form fields with clientAuth form', async () => {
    const { oauth, seen } = setup([{ status: 200, body: tokenBody() }], 'form');
    const tokens = await oauth.refresh(REFRESH);
    expect(seen[0]!.headers.authorization).toBeUndefined();
    expect(seen[0]!.form).toEqual({ grant_type: 'refresh_token', refresh_token: REFRESH, client_id: 'client-1', client_secret: CLIENT_SECRET });
    expect(tokens.project).toBeUndefined();
    expect(tokens.refreshToken).toBe(NEW_REFRESH);
  });

  it('drops a project on refresh and scopes it does not know', async () => {
    const { oauth } = setup([{ status: 200, body: tokenBody({ project: PROJECT, scope: 'user.identify future.scope' }) }]);
    const tokens = await oauth.refresh(REFRESH);
    expect(tokens).not.toHaveProperty('project');
    expect(tokens.scopes).toEqual(['user.identify']);
  });

  it('revokes with the token in the form', async () => {
    const { oauth, seen } = setup([{ status: 200 }], 'form');
    await oauth.revoke(REFRESH);
    expect(seen[0]!.path).toBe('/api/v1/oauth2/revoke');
    expect(seen[0]!.form).toEqual({ token: REFRESH, client_id: 'client-1', client_secret: CLIENT_SECRET });
  });

  it('never sends a token call twice, but retries a revoke after a 503', async () => {
    const first = setup([{ status: 503 }, { status: 200, body: tokenBody() }]);
    const error = await rejection(first.oauth.refresh(REFRESH));
    expect(error).toBeInstanceOf(ServerError);
    expect(first.seen).toHaveLength(1);

    const second = setup([{ status: 503 }, { status: 200 }]);
    await second.oauth.revoke(REFRESH);
    expect(second.seen).toHaveLength(2);
    expect(second.clock.sleeps).toHaveLength(1);
  });

  it('renders RFC 6749 errors without any secret', async () => {
    const echo = `bad grant ${REFRESH} for ${CLIENT_SECRET}`;
    const { oauth } = setup([
      { status: 400, body: { error: 'invalid_grant', error_description: echo } },
      { status: 401, body: { error: 'invalid_client', error_description: `unknown ${CLIENT_SECRET}` } },
    ], 'form');
    const bad = await rejection(oauth.refresh(REFRESH));
    expect(bad).toBeInstanceOf(BadRequestError);
    expect((bad as BadRequestError).error).toBe('invalid_grant');
    expect(bad.message).toMatch(/authorization again/);
    expectNoSecret(bad);
    expect((bad as BadRequestError).errorDescription).not.toContain(REFRESH);
    const unauthorized = await rejection(oauth.exchangeCode({ code: CODE, codeVerifier: VERIFIER }));
    expect(unauthorized).toBeInstanceOf(UnauthorizedError);
    expect((unauthorized as UnauthorizedError).error).toBe('invalid_client');
    expectNoSecret(unauthorized);
  });

  it('validates the answer and keeps the tokens it holds out of the message', async () => {
    const cases = [
      tokenBody({ token_type: 'mac' }),
      tokenBody({ expires_in: '604800' }),
      tokenBody({ refresh_token: undefined }),
      { ...tokenBody(), scope: 5 },
    ];
    for (const body of cases) {
      const { oauth } = setup([{ status: 200, body }]);
      const error = await rejection(oauth.refresh(REFRESH));
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).subject).toBe('response');
      expectNoSecret(error);
    }
  });

  it('accepts a lower-case bearer token type (RFC 6749 7.1)', async () => {
    const { oauth } = setup([{ status: 200, body: tokenBody({ token_type: 'bearer' }) }]);
    await expect(oauth.refresh(REFRESH)).resolves.toMatchObject({ accessToken: NEW_ACCESS });
  });

  it('checks requests before sending', async () => {
    const { oauth, seen } = setup([]);
    expect(await rejection(oauth.exchangeCode({ code: '', codeVerifier: VERIFIER }))).toBeInstanceOf(ValidationError);
    const short = await rejection(oauth.exchangeCode({ code: CODE, codeVerifier: 'short' }));
    expect(short).toBeInstanceOf(ValidationError);
    expectNoSecret(short);
    expect(await rejection(oauth.refresh(''))).toBeInstanceOf(ValidationError);
    expect(await rejection(oauth.revoke(''))).toBeInstanceOf(ValidationError);
    expect(seen).toHaveLength(0);
    expect(() => createOAuthClient({ clientId: 'c', clientSecret: '' })).toThrow(ValidationError);
  });
});
