import { describe, expect, it } from 'vitest';
import { ConflictError, CredentialError, ForbiddenError, ServerError, UnauthorizedError, UnprocessableEntityError } from '../../../src/api/errors.js';
import type { CreateProjectInput } from '../../../src/api/v1/users.js';
import { ValidationError } from '../../../src/errors.js';
import { clientFor } from '../../helpers/client.js';
import { setupBot, startTestEmulator, type TestEmulator } from '../../helpers/emulator.js';

const logged = (emu: TestEmulator, method: string, path: string) =>
  emu.admin.requests().filter((r) => r.method === method && r.path === `/api/v1${path}`);

describe('client.users', () => {
  it('reads the authorizing user and their projects', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const client = clientFor(emu, { accessToken: fx.accessToken });
    expect(await client.users.me()).toEqual({
      id: fx.ownerId,
      username: 'owner',
      avatar: null,
      connections: [{ platform: 'discord', id: fx.ownerPlatformId }],
    });
    expect(await client.users.projects()).toEqual([
      {
        id: fx.projectId,
        platform_id: fx.platformId,
        name: 'Test Bot',
        platform: 'discord',
        type: 'bot',
        headline: expect.any(String),
        review_status: expect.any(String),
      },
    ]);
  });

  it('creates a draft project (201), which then shows among the user\'s projects', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const client = clientFor(emu, { accessToken: fx.accessToken });
    const created = await client.users.createProject({
      platform: 'discord',
      type: 'server',
      platform_id: '123456789012345678',
      headline: 'A friendly server',
      page_content: 'p'.repeat(300),
    });
    expect(created).toEqual({
      id: expect.stringMatching(/^\d+$/),
      platform_id: '123456789012345678',
      name: expect.any(String),
      platform: 'discord',
      type: 'server',
      headline: 'A friendly server',
      review_status: 'draft',
    });
    expect(logged(emu, 'POST', '/users/@me/projects').map((r) => r.status)).toEqual([201]);
    expect((await client.users.projects()).map((p) => p.id)).toContain(created.id);
    const minecraft = await client.users.createProject({ platform: 'minecraft', type: 'game_server', platform_id: 'play.example.com' });
    expect(minecraft).toMatchObject({ platform: 'minecraft', type: 'game_server', review_status: 'draft' });
  });

  it('409 ConflictError when the platform ID is listed; 422 when the platform does not know it', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const client = clientFor(emu, { accessToken: fx.accessToken });
    const listed = await client.users.createProject({ platform: 'discord', type: 'bot', platform_id: fx.platformId }).catch((e: unknown) => e);
    expect(listed).toBeInstanceOf(ConflictError);
    expect((listed as ConflictError).status).toBe(409);
    const unknown = await client.users.createProject({ platform: 'roblox', type: 'game', platform_id: 'not-a-roblox-id' }).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(UnprocessableEntityError);
    expect((unknown as UnprocessableEntityError).status).toBe(422);
  });

  it('checks the body before sending: platform and type, headline, page_content', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const client = clientFor(emu, { accessToken: fx.accessToken });
    const cases: Array<[unknown, string[]]> = [
      [{ platform: 'discord', type: 'game', platform_id: '123456789012345678' }, ['type']],
      [{ platform: 'minecraft', type: 'server', platform_id: 'mc.example.com' }, ['type']],
      [{ platform: 'steam', type: 'game', platform_id: '1' }, ['platform']],
      [{ platform: 'roblox', type: 'game', platform_id: '' }, ['platform_id']],
      [{ platform: 'discord', type: 'bot', platform_id: '123456789012345678', headline: 'ab' }, ['headline']],
      [{ platform: 'discord', type: 'bot', platform_id: '123456789012345678', headline: 'h'.repeat(141) }, ['headline']],
      [{ platform: 'discord', type: 'bot', platform_id: '123456789012345678', page_content: 'too short' }, ['page_content']],
      [null, ['']],
    ];
    for (const [input, paths] of cases) {
      const error = await client.users.createProject(input as CreateProjectInput).catch((e: unknown) => e);
      expect(error, JSON.stringify(input)).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).subject).toBe('request');
      expect((error as ValidationError).issues.map((i) => i.path)).toEqual(paths);
    }
    expect(emu.admin.requests()).toEqual([]);
  });

  it('refuses an application token or a project token locally, saying an OAuth access token is needed', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const { application_token } = emu.admin.rotateApplicationToken(fx.clientId);
    for (const options of [{ applicationToken: application_token }, { projectToken: fx.projectToken }]) {
      const client = clientFor(emu, options);
      for (const call of [
        () => client.users.me(),
        () => client.users.projects(),
        () => client.users.createProject({ platform: 'discord', type: 'bot', platform_id: '123456789012345678' }),
      ]) {
        const error = await call().catch((e: unknown) => e);
        expect(error).toBeInstanceOf(CredentialError);
        expect((error as Error).message).toMatch(/needs an OAuth access token/);
      }
    }
    expect(emu.admin.requests()).toEqual([]);
  });

  it('403 ForbiddenError without the scope; 401 UnauthorizedError for a revoked access token', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu, { scopes: ['user.projects.read'] });
    const client = clientFor(emu, { accessToken: fx.accessToken });
    expect(await client.users.projects()).toHaveLength(1);
    const forbidden = await client.users.me().catch((e: unknown) => e);
    expect(forbidden).toBeInstanceOf(ForbiddenError);
    expect((forbidden as ForbiddenError).status).toBe(403);

    emu.admin.revokeUserAuthorizations(fx.ownerId, fx.clientId);
    const revoked = await client.users.projects().catch((e: unknown) => e);
    expect(revoked).toBeInstanceOf(UnauthorizedError);
    expect((revoked as UnauthorizedError).status).toBe(401);
    expect((revoked as Error).message).not.toContain(fx.accessToken);
  });

  it('never retries a project creation after sending: 502 is a ServerError after 1 request', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const client = clientFor(emu, { accessToken: fx.accessToken });
    emu.admin.injectFault({ method: 'POST', path: '/api/v1/users/@me/projects', status: 502 });
    const error = await client.users.createProject({ platform: 'discord', type: 'bot', platform_id: '123456789012345678' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServerError);
    expect((error as ServerError).status).toBe(502);
    expect(logged(emu, 'POST', '/users/@me/projects')).toHaveLength(1);
    // The reads are retried.
    emu.admin.injectFault({ method: 'GET', path: '/api/v1/users/@me', status: 503 });
    expect((await client.users.me()).id).toBe(fx.ownerId);
    expect(logged(emu, 'GET', '/users/@me').map((r) => r.status)).toEqual([503, 200]);
  });
});
