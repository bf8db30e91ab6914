import { describe, expect, it } from 'vitest';
import type { Scope } from '../../../src/contract/limits.js';
import { platformDescription } from '../../../src/emulator/model.js';
import { setupBot, startTestEmulator, type TestEmulator } from '../../helpers/emulator.js';
import type { TestResponse } from '../../helpers/http.js';

function expectProblem(res: TestResponse, status: number): void {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toContain('application/problem+json');
  expect(res.body.status).toBe(status);
}

/** A user with an access token carrying `scopes` for a fresh project of theirs. */
async function userWithToken(scopes: Scope[] = ['user.identify', 'user.projects.read', 'user.projects.write']) {
  const emu = await startTestEmulator();
  const fx = setupBot(emu, { scopes });
  return { emu, fx, token: fx.accessToken };
}

function create(emu: TestEmulator, token: string, body: Record<string, unknown>) {
  return emu.v1('/users/@me/projects', { bearer: token, json: body });
}

describe('GET /users/@me', () => {
  it('answers the user of the authorization', async () => {
    const { emu, fx, token } = await userWithToken();
    const res = await emu.v1('/users/@me', { bearer: token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: fx.ownerId,
      username: 'owner',
      avatar: null,
      connections: [{ platform: 'discord', id: fx.ownerPlatformId }],
    });
  });

  it('answers 401 for a missing, unknown, expired or revoked token', async () => {
    const { emu, fx, token } = await userWithToken();
    expectProblem(await emu.v1('/users/@me'), 401);
    expectProblem(await emu.v1('/users/@me', { bearer: 'lat_not-a-token' }), 401);
    expectProblem(await emu.v1('/users/@me', { authorization: token }), 401);

    const other = emu.admin.grantAuthorization({ client_id: fx.clientId, user_id: fx.ownerId, project_id: fx.projectId, scopes: ['user.identify'] });
    emu.admin.revokeUserAuthorizations(fx.ownerId, fx.clientId);
    expectProblem(await emu.v1('/users/@me', { bearer: other.access_token }), 401);

    const again = emu.admin.grantAuthorization({ client_id: fx.clientId, user_id: fx.ownerId, project_id: fx.projectId, scopes: ['user.identify'] });
    expect((await emu.v1('/users/@me', { bearer: again.access_token })).status).toBe(200);
    emu.admin.advanceClock(604_800);
    expectProblem(await emu.v1('/users/@me', { bearer: again.access_token }), 401);
  });

  it('answers 403 without user.identify, with an application token and with a project token', async () => {
    const { emu, fx, token } = await userWithToken(['user.projects.read', 'project.votes.read']);
    expectProblem(await emu.v1('/users/@me', { bearer: token }), 403);
    const { application_token } = emu.admin.rotateApplicationToken(fx.clientId);
    expectProblem(await emu.v1('/users/@me', { bearer: application_token }), 403);
    expectProblem(await emu.v1('/users/@me/projects', { bearer: application_token }), 403);
    expectProblem(await emu.v1('/users/@me', { bearer: fx.projectToken }), 403);
    expectProblem(await emu.v1('/users/@me/projects', { bearer: fx.projectToken }), 403);
  });

  it('answers 404 once the user is deleted', async () => {
    const { emu, fx, token } = await userWithToken();
    emu.admin.deleteUser(fx.ownerId);
    expectProblem(await emu.v1('/users/@me', { bearer: token }), 404);
    expectProblem(await emu.v1('/users/@me/projects', { bearer: token }), 404);
  });
});

describe('GET /users/@me/projects', () => {
  it('lists the projects the user owns or administers, and needs user.projects.read', async () => {
    const { emu, fx, token } = await userWithToken();
    const stranger = emu.admin.createUser({ username: 'stranger' });
    const { project: administered } = emu.admin.createProject({
      platform: 'roblox', type: 'game', platform_id: '777', name: 'Obby', owner_user_id: stranger.id, admin_user_ids: [fx.ownerId],
    });
    emu.admin.createProject({ platform: 'discord', type: 'server', owner_user_id: stranger.id });
    const res = await emu.v1('/users/@me/projects', { bearer: token });
    expect(res.status).toBe(200);
    expect(res.body.map((p: { id: string }) => p.id)).toEqual([fx.projectId, administered.id]);
    expect(res.body[1]).toEqual({
      id: administered.id, platform_id: '777', name: 'Obby', platform: 'roblox', type: 'game',
      headline: expect.any(String), review_status: 'approved',
    });
    emu.admin.setProjectAdmin(administered.id, fx.ownerId, false);
    expect((await emu.v1('/users/@me/projects', { bearer: token })).body).toHaveLength(1);

    const narrow = emu.admin.grantAuthorization({ client_id: fx.clientId, user_id: fx.ownerId, project_id: fx.projectId, scopes: ['user.identify'] });
    expectProblem(await emu.v1('/users/@me/projects', { bearer: narrow.access_token }), 403);
  });
});

describe('POST /users/@me/projects', () => {
  it('creates a draft for each platform and type, with defaults from the platform, listed afterwards', async () => {
    const { emu, fx, token } = await userWithToken();
    const cases = [
      { platform: 'discord', type: 'bot', platform_id: '123456789012345678' },
      { platform: 'discord', type: 'server', platform_id: '12345678901234567' },
      { platform: 'roblox', type: 'game', platform_id: '9' },
      { platform: 'minecraft', type: 'game_server', platform_id: 'play.example.com:25565' },
      { platform: 'minecraft', type: 'game_server', platform_id: '203.0.113.7' },
    ];
    const ids: string[] = [];
    for (const body of cases) {
      const res = await create(emu, token, body);
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ ...body, review_status: 'draft' });
      expect(res.body.headline).toBe(platformDescription(body.platform as 'discord', body.type as 'bot', res.body.name));
      const stored = emu.admin.getProject(res.body.id);
      expect(stored.owner_user_id).toBe(fx.ownerId);
      expect(stored.page_content.en!.length).toBeGreaterThanOrEqual(300);
      ids.push(res.body.id);
    }
    const listed = await emu.v1('/users/@me/projects', { bearer: token });
    expect(listed.body.map((p: { id: string }) => p.id)).toEqual([fx.projectId, ...ids]);
    expect(listed.body.slice(1).every((p: { review_status: string }) => p.review_status === 'draft')).toBe(true);
  });

  it('rejects a bad platform and type combination with 422', async () => {
    const { emu, token } = await userWithToken();
    for (const body of [
      { platform: 'discord', type: 'game', platform_id: '123456789012345678' },
      { platform: 'roblox', type: 'bot', platform_id: '1' },
      { platform: 'minecraft', type: 'server', platform_id: 'mc.example.com' },
      { platform: 'steam', type: 'game', platform_id: '1' },
      { type: 'bot', platform_id: '123456789012345678' },
      { platform: 'discord', platform_id: '123456789012345678' },
      { platform: 'discord', type: 'bot' },
      { platform: 'discord', type: 'bot', platform_id: 123456789012345678 },
    ]) {
      expectProblem(await create(emu, token, body), 422);
    }
  });

  it('answers 409 when the platform ID is already listed on that platform', async () => {
    const { emu, fx, token } = await userWithToken();
    expectProblem(await create(emu, token, { platform: 'discord', type: 'bot', platform_id: fx.platformId }), 409);
    expectProblem(await create(emu, token, { platform: 'discord', type: 'server', platform_id: fx.platformId }), 409);
    expect((await create(emu, token, { platform: 'minecraft', type: 'game_server', platform_id: 'MC.example.com' })).status).toBe(201);
    expectProblem(await create(emu, token, { platform: 'minecraft', type: 'game_server', platform_id: 'mc.example.com' }), 409);
    // The same digits on another platform are another project.
    expect((await create(emu, token, { platform: 'roblox', type: 'game', platform_id: fx.platformId })).status).toBe(201);
  });

  it('answers 422 for an ID the platform does not know', async () => {
    const { emu, token } = await userWithToken();
    for (const body of [
      { platform: 'discord', type: 'bot', platform_id: '1234567890123456' },
      { platform: 'discord', type: 'server', platform_id: 'abc' },
      { platform: 'roblox', type: 'game', platform_id: 'place-1' },
      { platform: 'roblox', type: 'game', platform_id: '123456789012345678901' },
      { platform: 'minecraft', type: 'game_server', platform_id: 'localhost' },
      { platform: 'minecraft', type: 'game_server', platform_id: 'mc.example.com:70000' },
      { platform: 'minecraft', type: 'game_server', platform_id: 'bad_host.example.com' },
    ]) {
      const res = await create(emu, token, body);
      expectProblem(res, 422);
      expect(res.body.detail).toContain('not found on the platform');
    }
  });

  it('enforces headline 3..140 and page_content 300..50,000 characters', async () => {
    const { emu, token } = await userWithToken();
    let n = 0;
    const attempt = (extra: Record<string, unknown>) => {
      n += 1;
      return create(emu, token, { platform: 'roblox', type: 'game', platform_id: String(1000 + n), ...extra });
    };
    expectProblem(await attempt({ headline: 'ab' }), 422);
    expectProblem(await attempt({ headline: 'a'.repeat(141) }), 422);
    expectProblem(await attempt({ headline: 42 }), 422);
    expectProblem(await attempt({ page_content: 'p'.repeat(299) }), 422);
    expectProblem(await attempt({ page_content: 'p'.repeat(50_001) }), 422);
    const shortest = await attempt({ headline: 'abc', page_content: 'p'.repeat(300) });
    expect(shortest.status).toBe(201);
    expect(shortest.body.headline).toBe('abc');
    expect(emu.admin.getProject(shortest.body.id).page_content.en).toBe('p'.repeat(300));
    const longest = await attempt({ headline: 'h'.repeat(140), page_content: 'p'.repeat(50_000) });
    expect(longest.status).toBe(201);
    expect(longest.body.headline).toBe('h'.repeat(140));
  });

  it('needs user.projects.write and a JSON body', async () => {
    const read = await userWithToken(['user.projects.read']);
    expectProblem(await create(read.emu, read.token, { platform: 'roblox', type: 'game', platform_id: '5' }), 403);
    const { emu, token } = await userWithToken();
    expectProblem(await emu.v1('/users/@me/projects', { bearer: token, body: 'platform=roblox', headers: { 'content-type': 'text/plain' } }), 415);
    expectProblem(await emu.v1('/users/@me/projects', { bearer: token, json: ['roblox'] }), 422);
  });
});
