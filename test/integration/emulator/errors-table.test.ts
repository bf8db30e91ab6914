import { describe, expect, it } from 'vitest';
import { issueProjectToken } from '../../../src/contract/project-token.js';
import { setupBot, startTestEmulator } from '../../helpers/emulator.js';
import type { TestResponse } from '../../helpers/http.js';

/** The contract's Errors table, row by row, on the credential rules every route shares. */

const FIXED_NOW = Date.parse('2026-03-04T10:00:00Z');

function expectProblem(res: TestResponse, status: number, detail?: string) {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toContain('application/problem+json');
  expect(res.body).toMatchObject({ type: 'about:blank', status });
  expect(typeof res.body.title).toBe('string');
  if (detail) expect(res.body.detail).toContain(detail);
}

function forgeToken(payload: unknown): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'HS256', typ: 'JWT' })}.${part(payload)}.c2lnbmF0dXJl`;
}

describe('Errors table: 400', () => {
  it('a token with the wrong schema on an @me route', async () => {
    const emu = await startTestEmulator();
    expectProblem(await emu.v1('/projects/@me', { bearer: 'not-a-jwt' }), 400, 'wrong schema');
    expectProblem(await emu.v1('/projects/@me', { bearer: forgeToken({ hello: 'world' }) }), 400, 'wrong schema');
  });

  it('a token whose project ID is not a Snowflake', async () => {
    const emu = await startTestEmulator();
    expectProblem(await emu.v1('/projects/@me', { bearer: forgeToken({ id: 'abc', bot: true, iat: 1 }) }), 400, 'project ID');
  });

  it('@me with an OAuth access token (it takes the explicit project ID)', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    expectProblem(await emu.v1('/projects/@me', { bearer: fx.accessToken }), 400, 'explicit project ID');
  });
});

describe('Errors table: 401', () => {
  it('a missing token, a token without Bearer, a token the service did not issue', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    expectProblem(await emu.v1('/projects/@me'), 401, 'missing Authorization');
    expectProblem(await emu.v1('/projects/@me', { authorization: fx.projectToken }), 401, 'Bearer');
    const foreign = issueProjectToken('another-service-key', fx.platformId, 1);
    expectProblem(await emu.v1('/projects/@me', { bearer: foreign }), 401, 'did not issue');
    expectProblem(await emu.v1(`/projects/${fx.projectId}`, { bearer: 'lat_unknown' }), 401);
  });

  it('an expired and a revoked access token', async () => {
    const emu = await startTestEmulator({ now: () => FIXED_NOW });
    const fx = setupBot(emu);
    expect((await emu.v1(`/projects/${fx.projectId}`, { bearer: fx.accessToken })).status).toBe(200);
    emu.admin.advanceClock(604_800);
    expectProblem(await emu.v1(`/projects/${fx.projectId}`, { bearer: fx.accessToken }), 401, 'expired');
    const again = emu.admin.grantAuthorization({ client_id: fx.clientId, user_id: fx.ownerId, project_id: fx.projectId, scopes: ['project.information.read'] });
    emu.admin.revokeUserAuthorizations(fx.ownerId, fx.clientId);
    expectProblem(await emu.v1(`/projects/${fx.projectId}`, { bearer: again.access_token }), 401, 'revoked');
  });
});

describe('Errors table: 403', () => {
  it('a scope not granted', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu, { scopes: ['project.votes.read'] });
    expectProblem(await emu.v1(`/projects/${fx.projectId}`, { bearer: fx.accessToken }), 403, 'project.information.read');
  });

  it('a project token on an explicit ID, on GET /projects and on user endpoints', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    expectProblem(await emu.v1(`/projects/${fx.projectId}`, { bearer: fx.projectToken }), 403, '@me');
    expectProblem(await emu.v1('/projects', { bearer: fx.projectToken }), 403);
    expectProblem(await emu.v1('/users/@me', { bearer: fx.projectToken }), 403);
  });

  it('user endpoints with an application token', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const { application_token } = emu.admin.rotateApplicationToken(fx.clientId);
    expectProblem(await emu.v1('/users/@me', { bearer: application_token }), 403, 'application token');
  });
});

describe('Errors table: 404', () => {
  it('a project not part of the authorization, and a project that no longer exists', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const other = emu.admin.createProject({ platform: 'discord', type: 'bot' });
    expectProblem(await emu.v1(`/projects/${other.project.id}`, { bearer: fx.accessToken }), 404);
    emu.admin.deleteProject(fx.projectId);
    expectProblem(await emu.v1('/projects/@me', { bearer: fx.projectToken }), 404, 'no longer exists');
  });

  it('an application token without a live authorization for the project', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const stranger = emu.admin.createApplication({ redirect_uris: ['https://example.com/cb'] });
    const { application_token } = emu.admin.rotateApplicationToken(stranger.client_id);
    expectProblem(await emu.v1(`/projects/${fx.projectId}`, { bearer: application_token }), 404, 'no live authorization');
  });
});

describe('Errors table: 429 on the published rate limits', () => {
  it('refuses the 101st request of a second with one credential, and answers again in the next second', async () => {
    let now = FIXED_NOW;
    const emu = await startTestEmulator({ now: () => now });
    const fx = setupBot(emu);
    const statuses = await Promise.all(
      Array.from({ length: 101 }, () => emu.v1('/projects/@me', { bearer: fx.projectToken }).then((r) => r.status)),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(100);
    const refused = await emu.v1('/projects/@me', { bearer: fx.projectToken });
    expectProblem(refused, 429);
    expect(refused.headers.get('retry-after')).toBe('1');
    // Another credential has its own budget.
    expect((await emu.v1(`/projects/${fx.projectId}`, { bearer: fx.accessToken })).status).toBe(200);
    now += 1000;
    expect((await emu.v1('/projects/@me', { bearer: fx.projectToken })).status).toBe(200);
  });
});

describe('Errors table: 502', () => {
  it('a metrics update while the upstream metrics service is unavailable (fault)', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    emu.admin.injectFault({ method: 'PATCH', path: '/api/v1/projects/@me/metrics', status: 502 });
    expectProblem(await emu.v1('/projects/@me/metrics', { method: 'PATCH', bearer: fx.projectToken, json: { server_count: 3 } }), 502);
    const retried = await emu.v1('/projects/@me/metrics', { method: 'PATCH', bearer: fx.projectToken, json: { server_count: 3 } });
    expect(retried.status).toBe(204);
    expect(emu.admin.metrics(fx.projectId)).toHaveLength(1);
  });
});
