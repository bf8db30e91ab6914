import { describe, expect, it } from 'vitest';
import { createCodeVerifier, s256Challenge } from '../../../src/contract/pkce.js';
import { formatBasicAuth } from '../../../src/contract/basic-auth.js';
import { startTestEmulator, type TestEmulator } from '../../helpers/emulator.js';
import type { TestResponse } from '../../helpers/http.js';

const REDIRECT = 'http://127.0.0.1:1/callback';

interface Fixture {
  emu: TestEmulator;
  ownerId: string;
  projectId: string;
  platformId: string;
  clientId: string;
  clientSecret: string;
}

/** An owner with one Discord bot and an application, without any authorization yet. */
async function fixture(options: { clientSecret?: string } = {}): Promise<Fixture> {
  const emu = await startTestEmulator();
  const owner = emu.admin.createUser({ username: 'owner' });
  const { project } = emu.admin.createProject({ platform: 'discord', type: 'bot', owner_user_id: owner.id, name: 'Bot' });
  const app = emu.admin.createApplication({
    redirect_uris: [REDIRECT, 'http://127.0.0.1:1/other', 'https://client.example/cb?tenant=7'],
    ...(options.clientSecret ? { client_secret: options.clientSecret } : {}),
  });
  return {
    emu, ownerId: owner.id, projectId: project.id, platformId: project.platform_id,
    clientId: app.client_id, clientSecret: app.client_secret,
  };
}

function authorizeQuery(f: Fixture, overrides: Record<string, string | null> = {}, verifier = 'v'.repeat(43)): string {
  const params: Record<string, string | null> = {
    client_id: f.clientId,
    response_type: 'code',
    redirect_uri: REDIRECT,
    scope: 'user.identify project.votes.read',
    state: 'st-123',
    code_challenge: s256Challenge(verifier),
    code_challenge_method: 'S256',
    ...overrides,
  };
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== null) query.set(name, value);
  return `/oauth2/authorize?${query}`;
}

/** The query of a 302's location (fails the test when the response is not a redirect to `base`). */
function redirectedTo(res: TestResponse, base = REDIRECT): URLSearchParams {
  expect(res.status).toBe(302);
  const location = res.headers.get('location') ?? '';
  expect(location.startsWith(`${base}?`) || location.startsWith(`${base}&`)).toBe(true);
  return new URL(location).searchParams;
}

/** Runs the non-interactive authorization and returns the code and its verifier. */
async function getCode(f: Fixture, overrides: Record<string, string | null> = {}): Promise<{ code: string; verifier: string }> {
  const verifier = createCodeVerifier();
  const res = await f.emu.root(authorizeQuery(f, { login_as: f.ownerId, decision: 'approve', ...overrides }, verifier));
  const query = redirectedTo(res);
  expect(query.get('state')).toBe('st-123');
  const code = query.get('code');
  expect(code).toBeTruthy();
  return { code: code!, verifier };
}

function exchange(f: Fixture, code: string, verifier: string, extra: Record<string, string> = {}) {
  return f.emu.v1('/oauth2/token', {
    form: {
      grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier,
      client_id: f.clientId, client_secret: f.clientSecret, ...extra,
    },
  });
}

function refresh(f: Fixture, refreshToken: string) {
  return f.emu.v1('/oauth2/token', {
    form: { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: f.clientId, client_secret: f.clientSecret },
  });
}

async function tokens(f: Fixture): Promise<{ access_token: string; refresh_token: string }> {
  const { code, verifier } = await getCode(f);
  const res = await exchange(f, code, verifier);
  expect(res.status).toBe(200);
  return res.body;
}

const me = (f: Fixture, token: string) => f.emu.v1('/users/@me', { bearer: token });

function expectOAuthError(res: TestResponse, status: number, error: string): void {
  expect(res.status).toBe(status);
  expect(res.body.error).toBe(error);
  expect(typeof res.body.error_description).toBe('string');
}

describe('GET /oauth2/authorize: parameter rules', () => {
  it('answers an unknown or missing client_id with a 400 page, never a redirect', async () => {
    const f = await fixture();
    for (const clientId of ['nope', null]) {
      const res = await f.emu.root(authorizeQuery(f, { client_id: clientId }));
      expect(res.status).toBe(400);
      expect(res.headers.get('location')).toBeNull();
      expect(res.headers.get('content-type')).toContain('text/html');
    }
  });

  it('answers a redirect_uri that is not registered exactly with a 400 page', async () => {
    const f = await fixture();
    for (const uri of ['https://evil.example/cb', `${REDIRECT}/`, `${REDIRECT}?x=1`, 'HTTP://127.0.0.1:1/callback', null]) {
      const res = await f.emu.root(authorizeQuery(f, { redirect_uri: uri }));
      expect(res.status).toBe(400);
      expect(res.headers.get('location')).toBeNull();
      expect(res.text).toContain('redirect_uri');
    }
  });

  it('redirects invalid_request without state when state is missing', async () => {
    const f = await fixture();
    const query = redirectedTo(await f.emu.root(authorizeQuery(f, { state: null })));
    expect(query.get('error')).toBe('invalid_request');
    expect(query.has('state')).toBe(false);
    expect(query.has('code')).toBe(false);
  });

  it('redirects unsupported_response_type for anything but code, invalid_request when it is missing', async () => {
    const f = await fixture();
    const wrong = redirectedTo(await f.emu.root(authorizeQuery(f, { response_type: 'token' })));
    expect(wrong.get('error')).toBe('unsupported_response_type');
    expect(wrong.get('state')).toBe('st-123');
    const missing = redirectedTo(await f.emu.root(authorizeQuery(f, { response_type: null })));
    expect(missing.get('error')).toBe('invalid_request');
  });

  it('requires PKCE with S256: plain or a missing method or challenge is invalid_request', async () => {
    const f = await fixture();
    const cases: Record<string, string | null>[] = [
      { code_challenge_method: 'plain' },
      { code_challenge_method: null },
      { code_challenge: null },
    ];
    for (const overrides of cases) {
      const query = redirectedTo(await f.emu.root(authorizeQuery(f, overrides)));
      expect(query.get('error')).toBe('invalid_request');
      expect(query.get('state')).toBe('st-123');
    }
  });

  it('rejects a challenge that is not 43 base64url characters', async () => {
    const f = await fixture();
    const good = s256Challenge('v'.repeat(43));
    for (const challenge of [good.slice(1), `${good.slice(1)}=`, `${good}A`, `${good.slice(1)}+`]) {
      const query = redirectedTo(await f.emu.root(authorizeQuery(f, { code_challenge: challenge })));
      expect(query.get('error')).toBe('invalid_request');
    }
  });

  it('rejects unknown scopes with invalid_scope and a missing scope with invalid_request', async () => {
    const f = await fixture();
    const unknown = redirectedTo(await f.emu.root(authorizeQuery(f, { scope: 'user.identify project.everything' })));
    expect(unknown.get('error')).toBe('invalid_scope');
    expect(unknown.get('error_description')).toContain('project.everything');
    expect(unknown.get('state')).toBe('st-123');
    const missing = redirectedTo(await f.emu.root(authorizeQuery(f, { scope: null })));
    expect(missing.get('error')).toBe('invalid_request');
  });

  it('rejects a repeated parameter with invalid_request', async () => {
    const f = await fixture();
    const res = await f.emu.root(`${authorizeQuery(f)}&scope=user.identify`);
    expect(redirectedTo(res).get('error')).toBe('invalid_request');
  });

  it('decodes + in scope as a space and grants exactly the requested scopes', async () => {
    const f = await fixture();
    const verifier = createCodeVerifier();
    const path = authorizeQuery(f, { scope: null, login_as: f.ownerId, decision: 'approve' }, verifier);
    const res = await f.emu.root(`${path}&scope=user.identify+project.metrics.write`);
    const code = redirectedTo(res).get('code')!;
    const exchanged = await exchange(f, code, verifier);
    expect(exchanged.status).toBe(200);
    expect(exchanged.body.scope.split(' ').sort()).toEqual(['project.metrics.write', 'user.identify']);
  });

  it('keeps the query of a registered redirect URI and appends code and state', async () => {
    const f = await fixture();
    const uri = 'https://client.example/cb?tenant=7';
    const res = await f.emu.root(authorizeQuery(f, { redirect_uri: uri, login_as: f.ownerId, decision: 'approve' }));
    expect(res.headers.get('location')).toMatch(/^https:\/\/client\.example\/cb\?tenant=7&code=lac_[\w-]+&state=st-123$/);
  });

  it('redirects access_denied with state when the user cancels', async () => {
    const f = await fixture();
    const query = redirectedTo(await f.emu.root(authorizeQuery(f, { login_as: f.ownerId, decision: 'cancel' })));
    expect(query.get('error')).toBe('access_denied');
    expect(query.get('state')).toBe('st-123');
    expect(query.has('code')).toBe(false);
  });

  it('denies a user who does not own or administer the project, and an unknown user', async () => {
    const f = await fixture();
    const stranger = f.emu.admin.createUser({ username: 'stranger' });
    f.emu.admin.createProject({ platform: 'roblox', type: 'game', owner_user_id: stranger.id });
    const cases: Record<string, string>[] = [
      { login_as: stranger.id, project_id: f.projectId },
      { login_as: stranger.id, platform: 'discord', platform_id: f.platformId },
      { login_as: '999' },
    ];
    for (const overrides of cases) {
      const query = redirectedTo(await f.emu.root(authorizeQuery(f, { decision: 'approve', ...overrides })));
      expect(query.get('error')).toBe('access_denied');
      expect(query.get('state')).toBe('st-123');
    }
    const nothing = f.emu.admin.createUser({ username: 'no-projects' });
    const none = redirectedTo(await f.emu.root(authorizeQuery(f, { decision: 'approve', login_as: nothing.id })));
    expect(none.get('error')).toBe('access_denied');
  });

  it('lets an admin grant, and needs project_id when the user manages several projects', async () => {
    const f = await fixture();
    const admin = f.emu.admin.createUser({ username: 'admin' });
    f.emu.admin.setProjectAdmin(f.projectId, admin.id, true);
    const { project: second } = f.emu.admin.createProject({
      platform: 'roblox', type: 'game', platform_id: '4242', owner_user_id: f.ownerId,
    });
    const several = redirectedTo(await f.emu.root(authorizeQuery(f, { login_as: f.ownerId, decision: 'approve' })));
    expect(several.get('error')).toBe('invalid_request');
    expect(several.get('error_description')).toContain('project_id');

    // An unknown project_id is ignored, then platform + platform_id picks the project.
    const byPlatform = await getCode(f, { project_id: '1', platform: 'roblox', platform_id: '4242' });
    expect((await exchange(f, byPlatform.code, byPlatform.verifier)).body.project.id).toBe(second.id);
    const byId = await getCode(f, { project_id: f.projectId });
    const exchanged = await exchange(f, byId.code, byId.verifier);
    expect(exchanged.body.project).toEqual({ id: f.projectId, platform_id: f.platformId, name: 'Bot', platform: 'discord', type: 'bot' });
    const asAdmin = await getCode(f, { login_as: admin.id });
    expect((await exchange(f, asAdmin.code, asAdmin.verifier)).body.project.id).toBe(f.projectId);
  });

  it('renders a consent page with every value escaped and every parameter kept', async () => {
    const f = await fixture();
    f.emu.admin.createUser({ username: '<b>mallory</b>' });
    f.emu.admin.createProject({ platform: 'discord', type: 'server', owner_user_id: f.ownerId, name: 'A & <i>B</i>' });
    const res = await f.emu.root(authorizeQuery(f, { state: '"><script>alert(1)</script>' }));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.text).not.toContain('<script>');
    expect(res.text).not.toContain('<b>mallory');
    expect(res.text).not.toContain('<i>B');
    expect(res.text).toContain('&#34;&#62;&#60;script&#62;alert(1)&#60;/script&#62;');
    expect(res.text).toContain('&#60;b&#62;mallory&#60;/b&#62;');
    expect(res.text).toContain('A &#38; &#60;i&#62;B&#60;/i&#62;');
    expect(res.text).toContain('<form method="get" action="/oauth2/authorize">');
    for (const name of ['client_id', 'response_type', 'redirect_uri', 'scope', 'state', 'code_challenge', 'code_challenge_method']) {
      expect(res.text).toContain(`<input type="hidden" name="${name}"`);
    }
    expect(res.text).toContain('<select name="login_as">');
    expect(res.text).toContain('<select name="project_id">');
    expect(res.text).toContain('name="decision" value="approve"');
    expect(res.text).toContain('name="decision" value="cancel"');
    expect(res.text).toContain('user.identify');
  });

  it('accepts what the consent form submits (hidden fields plus the picks)', async () => {
    const f = await fixture();
    const verifier = createCodeVerifier();
    const page = await f.emu.root(authorizeQuery(f, {}, verifier));
    const fields = new URLSearchParams();
    for (const match of page.text.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)) {
      fields.set(match[1]!, match[2]!.replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code))));
    }
    fields.set('login_as', f.ownerId);
    fields.set('project_id', f.projectId);
    fields.set('decision', 'approve');
    const query = redirectedTo(await f.emu.root(`/oauth2/authorize?${fields}`));
    expect((await exchange(f, query.get('code')!, verifier)).status).toBe(200);
  });
});

describe('POST /oauth2/token: authorization_code', () => {
  it('exchanges a code with form credentials', async () => {
    const f = await fixture();
    const { code, verifier } = await getCode(f);
    const res = await exchange(f, code, verifier);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.body).toEqual({
      access_token: expect.any(String),
      token_type: 'Bearer',
      expires_in: 604800,
      refresh_token: expect.any(String),
      scope: 'user.identify project.votes.read',
      project: { id: f.projectId, platform_id: f.platformId, name: 'Bot', platform: 'discord', type: 'bot' },
    });
    const user = await me(f, res.body.access_token);
    expect(user.status).toBe(200);
    expect(user.body.id).toBe(f.ownerId);
  });

  it('exchanges a code with HTTP Basic credentials (form-urlencoded, then base64)', async () => {
    const f = await fixture({ clientSecret: 'se:cr+et %/é' });
    const { code, verifier } = await getCode(f);
    const res = await f.emu.v1('/oauth2/token', {
      form: { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier },
      headers: { authorization: formatBasicAuth(f.clientId, f.clientSecret) },
    });
    expect(res.status).toBe(200);
    expect(res.body.project.id).toBe(f.projectId);
  });

  it('answers a wrong secret, an unknown client or no credentials with 401 invalid_client', async () => {
    const f = await fixture();
    const { code, verifier } = await getCode(f);
    const wrong = await exchange(f, code, verifier, { client_secret: 'wrong-secret' });
    expectOAuthError(wrong, 401, 'invalid_client');
    expect(wrong.text).not.toContain('wrong-secret');
    expect(wrong.text).not.toContain(f.clientSecret);
    expectOAuthError(await exchange(f, code, verifier, { client_id: 'nobody' }), 401, 'invalid_client');

    const basic = await f.emu.v1('/oauth2/token', {
      form: { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier },
      headers: { authorization: formatBasicAuth(f.clientId, 'wrong-secret') },
    });
    expectOAuthError(basic, 401, 'invalid_client');
    expect(basic.headers.get('www-authenticate')).toMatch(/^Basic/);
    const none = await f.emu.v1('/oauth2/token', {
      form: { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier },
    });
    expectOAuthError(none, 401, 'invalid_client');
    // The failures did not burn the code.
    expect((await exchange(f, code, verifier)).status).toBe(200);
  });

  it('stops accepting the old secret once it is rotated', async () => {
    const f = await fixture();
    const { client_secret: newSecret } = f.emu.admin.rotateClientSecret(f.clientId);
    const { code, verifier } = await getCode(f);
    expectOAuthError(await exchange(f, code, verifier), 401, 'invalid_client');
    expect((await exchange(f, code, verifier, { client_secret: newSecret })).status).toBe(200);
  });

  it('takes only form bodies, and names missing parameters and unknown grant types', async () => {
    const f = await fixture();
    const { code, verifier } = await getCode(f);
    const asJson = await f.emu.v1('/oauth2/token', {
      json: { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier, client_id: f.clientId, client_secret: f.clientSecret },
    });
    expectOAuthError(asJson, 400, 'invalid_request');
    expectOAuthError(await exchange(f, code, ''), 400, 'invalid_request');
    expectOAuthError(await exchange(f, code, verifier, { grant_type: 'password' }), 400, 'unsupported_grant_type');
    expectOAuthError(await exchange(f, code, verifier, { grant_type: '' }), 400, 'invalid_request');
    const both = await f.emu.v1('/oauth2/token', {
      form: { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier, client_secret: f.clientSecret },
      headers: { authorization: formatBasicAuth(f.clientId, f.clientSecret) },
    });
    expectOAuthError(both, 400, 'invalid_request');
  });

  it('expires codes after 60 seconds of emulator time', async () => {
    const f = await fixture();
    const late = await getCode(f);
    f.emu.admin.advanceClock(61);
    const expired = await exchange(f, late.code, late.verifier);
    expectOAuthError(expired, 400, 'invalid_grant');
    expect(expired.body.error_description).toContain('expired');

    const inTime = await getCode(f);
    f.emu.admin.advanceClock(59);
    expect((await exchange(f, inTime.code, inTime.verifier)).status).toBe(200);
  });

  it('uses a code once; a replay fails and revokes the tokens the code produced', async () => {
    const f = await fixture();
    const { code, verifier } = await getCode(f);
    const first = await exchange(f, code, verifier);
    expect(first.status).toBe(200);
    expect((await me(f, first.body.access_token)).status).toBe(200);
    expectOAuthError(await exchange(f, code, verifier), 400, 'invalid_grant');
    expect((await me(f, first.body.access_token)).status).toBe(401);
    expectOAuthError(await refresh(f, first.body.refresh_token), 400, 'invalid_grant');
  });

  it('rejects a verifier that does not match or has a bad length', async () => {
    const f = await fixture();
    const { code, verifier } = await getCode(f);
    expectOAuthError(await exchange(f, code, createCodeVerifier()), 400, 'invalid_grant');
    expectOAuthError(await exchange(f, code, verifier.slice(0, 42)), 400, 'invalid_grant');
    expectOAuthError(await exchange(f, code, 'a'.repeat(129)), 400, 'invalid_grant');
  });

  it('rejects a redirect_uri other than the one of the request, and a code of another client', async () => {
    const f = await fixture();
    const { code, verifier } = await getCode(f);
    expectOAuthError(await exchange(f, code, verifier, { redirect_uri: 'http://127.0.0.1:1/other' }), 400, 'invalid_grant');
    const other = f.emu.admin.createApplication({ redirect_uris: [REDIRECT] });
    const stolen = await exchange(f, code, verifier, { client_id: other.client_id, client_secret: other.client_secret });
    expectOAuthError(stolen, 400, 'invalid_grant');
    expectOAuthError(await exchange(f, 'lac_unknown', verifier), 400, 'invalid_grant');
  });
});

describe('POST /oauth2/token: refresh_token', () => {
  it('rotates the refresh token and issues a new access token, without project', async () => {
    const f = await fixture();
    const first = await tokens(f);
    const res = await refresh(f, first.refresh_token);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.body).toEqual({
      access_token: expect.any(String),
      token_type: 'Bearer',
      expires_in: 604800,
      refresh_token: expect.any(String),
      scope: 'user.identify project.votes.read',
    });
    expect(res.body).not.toHaveProperty('project');
    expect(res.body.refresh_token).not.toBe(first.refresh_token);
    expect(res.body.access_token).not.toBe(first.access_token);
    expect((await me(f, res.body.access_token)).status).toBe(200);
    expectOAuthError(await refresh(f, first.refresh_token), 400, 'invalid_grant');
    expect((await refresh(f, res.body.refresh_token)).status).toBe(200);
  });

  it('rejects a refresh token of another client and an unknown one', async () => {
    const f = await fixture();
    const first = await tokens(f);
    const other = f.emu.admin.createApplication({ redirect_uris: [REDIRECT] });
    const res = await f.emu.v1('/oauth2/token', {
      form: { grant_type: 'refresh_token', refresh_token: first.refresh_token, client_id: other.client_id, client_secret: other.client_secret },
    });
    expectOAuthError(res, 400, 'invalid_grant');
    expectOAuthError(await refresh(f, 'lrt_unknown'), 400, 'invalid_grant');
    expect((await refresh(f, first.refresh_token)).status).toBe(200);
  });

  it('lets an access token expire after 604800 seconds', async () => {
    const f = await fixture();
    const { access_token } = await tokens(f);
    f.emu.admin.advanceClock(604_799);
    expect((await me(f, access_token)).status).toBe(200);
    f.emu.admin.advanceClock(1);
    const expired = await me(f, access_token);
    expect(expired.status).toBe(401);
    expect(expired.headers.get('content-type')).toContain('application/problem+json');
  });
});

describe('POST /oauth2/revoke', () => {
  it('revokes the authorization and every access token with the refresh token; 200 with an empty body', async () => {
    const f = await fixture();
    const first = await tokens(f);
    const second = (await refresh(f, first.refresh_token)).body;
    const res = await f.emu.v1('/oauth2/revoke', {
      form: { token: second.refresh_token, client_id: f.clientId, client_secret: f.clientSecret },
    });
    expect(res.status).toBe(200);
    expect(res.text).toBe('');
    expect((await me(f, first.access_token)).status).toBe(401);
    expect((await me(f, second.access_token)).status).toBe(401);
    expectOAuthError(await refresh(f, second.refresh_token), 400, 'invalid_grant');
  });

  it('revokes just the access token when given one, and accepts unknown tokens', async () => {
    const f = await fixture();
    const first = await tokens(f);
    const res = await f.emu.v1('/oauth2/revoke', {
      form: { token: first.access_token, token_type_hint: 'access_token' },
      headers: { authorization: formatBasicAuth(f.clientId, f.clientSecret) },
    });
    expect(res.status).toBe(200);
    expect((await me(f, first.access_token)).status).toBe(401);
    const refreshed = await refresh(f, first.refresh_token);
    expect(refreshed.status).toBe(200);
    expect((await me(f, refreshed.body.access_token)).status).toBe(200);
    const unknown = await f.emu.v1('/oauth2/revoke', { form: { token: 'nothing', client_id: f.clientId, client_secret: f.clientSecret } });
    expect(unknown.status).toBe(200);
    expect(unknown.text).toBe('');
  });

  it('needs client credentials and leaves tokens of other clients alone', async () => {
    const f = await fixture();
    const first = await tokens(f);
    const wrong = await f.emu.v1('/oauth2/revoke', { form: { token: first.refresh_token, client_id: f.clientId, client_secret: 'nope' } });
    expectOAuthError(wrong, 401, 'invalid_client');
    const other = f.emu.admin.createApplication({ redirect_uris: [REDIRECT] });
    const foreign = await f.emu.v1('/oauth2/revoke', {
      form: { token: first.refresh_token, client_id: other.client_id, client_secret: other.client_secret },
    });
    expect(foreign.status).toBe(200);
    expect((await me(f, first.access_token)).status).toBe(200);
    expect((await refresh(f, first.refresh_token)).status).toBe(200);
  });
});

describe('re-authorization', () => {
  it('replaces the previous authorization of the same project', async () => {
    const f = await fixture();
    const old = await tokens(f);
    const fresh = await tokens(f);
    expect((await me(f, old.access_token)).status).toBe(401);
    expectOAuthError(await refresh(f, old.refresh_token), 400, 'invalid_grant');
    expect((await me(f, fresh.access_token)).status).toBe(200);
    expect((await refresh(f, fresh.refresh_token)).status).toBe(200);
  });
});
