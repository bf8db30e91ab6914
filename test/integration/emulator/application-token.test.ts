import { describe, expect, it } from 'vitest';
import type { Scope } from '../../../src/contract/limits.js';
import { authorizeProject } from '../../../src/emulator/auth.js';
import { HttpError, type RequestContext } from '../../../src/emulator/http.js';
import { startTestEmulator, type TestEmulator } from '../../helpers/emulator.js';
import type { TestResponse } from '../../helpers/http.js';

const REDIRECT = 'http://127.0.0.1:1/callback';

function expectProblem(res: TestResponse, status: number): void {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toContain('application/problem+json');
}

/** Two users (owner and admin) of one project, a second project, and an application. */
async function fixture() {
  const emu = await startTestEmulator();
  const owner = emu.admin.createUser({ username: 'owner' });
  const admin = emu.admin.createUser({ username: 'admin' });
  const { project } = emu.admin.createProject({
    platform: 'discord', type: 'bot', owner_user_id: owner.id, admin_user_ids: [admin.id], name: 'Shared',
  });
  const { project: other } = emu.admin.createProject({ platform: 'roblox', type: 'game', owner_user_id: owner.id, name: 'Other' });
  const { project: ungranted } = emu.admin.createProject({ platform: 'discord', type: 'server', owner_user_id: owner.id });
  const app = emu.admin.createApplication({ redirect_uris: [REDIRECT] });
  const grant = (userId: string, projectId: string, scopes: Scope[]) =>
    emu.admin.grantAuthorization({ client_id: app.client_id, user_id: userId, project_id: projectId, scopes });
  return { emu, owner, admin, project, other, ungranted, app, grant };
}

const listIds = async (emu: TestEmulator, token: string): Promise<string[]> => {
  const res = await emu.v1('/projects', { bearer: token });
  expect(res.status).toBe(200);
  return res.body.projects.map((p: { id: string }) => p.id);
};

/**
 * Runs the core's project authorization in-process, so scope union is checked even while the
 * project-scoped routes are being written elsewhere. Returns the acting user or the error status.
 */
function projectAccess(emu: TestEmulator, token: string, projectId: string, scope: Scope): string | number {
  const ctx = {
    req: { headers: { authorization: `Bearer ${token}` } },
    emu: emu.context,
    credential: null,
  } as unknown as RequestContext;
  try {
    return authorizeProject(ctx, projectId, scope).actingUserId ?? 'none';
  } catch (error) {
    if (error instanceof HttpError) return error.status;
    throw error;
  }
}

describe('application token', () => {
  it('does not exist before the first rotation', async () => {
    const { emu, app } = await fixture();
    expect(emu.context.state.applications.get(app.client_id)!.application_token).toBeNull();
    expectProblem(await emu.v1('/projects', { bearer: 'lapp_guess' }), 401);
    const { application_token } = emu.admin.rotateApplicationToken(app.client_id);
    expect(application_token).toMatch(/^lapp_/);
    expect(await listIds(emu, application_token)).toEqual([]);
  });

  it('lists only the projects with a live authorization', async () => {
    const { emu, owner, project, other, app, grant } = await fixture();
    grant(owner.id, project.id, ['project.votes.read']);
    grant(owner.id, other.id, ['project.metrics.write']);
    const { application_token } = emu.admin.rotateApplicationToken(app.client_id);
    const res = await emu.v1('/projects', { bearer: application_token });
    expect(res.body).toEqual({
      projects: [
        { id: project.id, platform_id: project.platform_id, name: 'Shared', platform: 'discord', type: 'bot' },
        { id: other.id, platform_id: other.platform_id, name: 'Other', platform: 'roblox', type: 'game' },
      ],
    });
    // Another application's token sees none of them.
    const stranger = emu.admin.createApplication({ redirect_uris: [REDIRECT] });
    expect(await listIds(emu, emu.admin.rotateApplicationToken(stranger.client_id).application_token)).toEqual([]);
  });

  it('has the union of the scopes of every live authorization of a project', async () => {
    const { emu, owner, admin, project, app, grant } = await fixture();
    grant(owner.id, project.id, ['project.votes.read']);
    grant(admin.id, project.id, ['project.information.read', 'user.identify']);
    const { application_token: token } = emu.admin.rotateApplicationToken(app.client_id);
    expect(await listIds(emu, token)).toEqual([project.id]);
    expect(projectAccess(emu, token, project.id, 'project.votes.read')).toBe(owner.id);
    expect(projectAccess(emu, token, project.id, 'project.information.read')).toBe(admin.id);
    expect(projectAccess(emu, token, project.id, 'project.webhooks.write')).toBe(403);
    // user.* never works with an application token, even when a user granted it.
    expectProblem(await emu.v1('/users/@me', { bearer: token }), 403);

    // Over HTTP too: each scope comes from a different user's authorization.
    expect((await emu.v1(`/projects/${project.id}`, { bearer: token })).status).toBe(200);
    expect((await emu.v1(`/projects/${project.id}/votes?startDate=${new Date().toISOString()}`, { bearer: token })).status).toBe(200);
    expectProblem(await emu.v1(`/projects/${project.id}/commands`, { method: 'PUT', bearer: token, json: [] }), 403);
  });

  it('loses a project when its user revokes the application', async () => {
    const { emu, owner, admin, project, other, app, grant } = await fixture();
    grant(owner.id, project.id, ['project.votes.read']);
    grant(owner.id, other.id, ['project.votes.read']);
    grant(admin.id, project.id, ['project.information.read']);
    const { application_token: token } = emu.admin.rotateApplicationToken(app.client_id);
    emu.admin.revokeUserAuthorizations(owner.id, app.client_id);
    // The admin's authorization still reaches the shared project, with the admin's scopes only.
    expect(await listIds(emu, token)).toEqual([project.id]);
    expect(projectAccess(emu, token, project.id, 'project.votes.read')).toBe(403);
    expect(projectAccess(emu, token, other.id, 'project.votes.read')).toBe(404);
    emu.admin.revokeUserAuthorizations(admin.id, app.client_id);
    expect(await listIds(emu, token)).toEqual([]);
    expect(projectAccess(emu, token, project.id, 'project.information.read')).toBe(404);
  });

  it('loses a project when the granting user can no longer manage it or is deleted', async () => {
    const { emu, owner, admin, project, other, app, grant } = await fixture();
    grant(admin.id, project.id, ['project.votes.read']);
    grant(owner.id, other.id, ['project.votes.read']);
    const { application_token: token } = emu.admin.rotateApplicationToken(app.client_id);
    expect(await listIds(emu, token)).toEqual([project.id, other.id]);
    emu.admin.setProjectAdmin(project.id, admin.id, false);
    expect(await listIds(emu, token)).toEqual([other.id]);
    expect(projectAccess(emu, token, project.id, 'project.votes.read')).toBe(404);
    emu.admin.setProjectAdmin(project.id, admin.id, true);
    expect(await listIds(emu, token)).toEqual([project.id, other.id]);
    emu.admin.deleteUser(owner.id);
    expect(await listIds(emu, token)).toEqual([project.id]);
  });

  it('stops working everywhere once rotated', async () => {
    const { emu, owner, project, app, grant } = await fixture();
    grant(owner.id, project.id, ['project.votes.read']);
    const { application_token: old } = emu.admin.rotateApplicationToken(app.client_id);
    const { application_token: fresh } = emu.admin.rotateApplicationToken(app.client_id);
    expect(fresh).not.toBe(old);
    expectProblem(await emu.v1('/projects', { bearer: old }), 401);
    expectProblem(await emu.v1('/users/@me', { bearer: old }), 401);
    expect(projectAccess(emu, old, project.id, 'project.votes.read')).toBe(401);
    expect(await listIds(emu, fresh)).toEqual([project.id]);
    expect(projectAccess(emu, fresh, project.id, 'project.votes.read')).toBe(owner.id);
  });
});

describe('GET /projects', () => {
  it('pages by scanning 100 projects at a time; a page can be empty while later ones are not', async () => {
    const emu = await startTestEmulator();
    const owner = emu.admin.createUser({ username: 'owner' });
    const app = emu.admin.createApplication({ redirect_uris: [REDIRECT] });
    const ids: string[] = [];
    for (let i = 1; i <= 250; i += 1) {
      ids.push(emu.admin.createProject({ platform: 'roblox', type: 'game', platform_id: String(i), owner_user_id: owner.id }).project.id);
    }
    for (const n of [150, 240]) {
      emu.admin.grantAuthorization({ client_id: app.client_id, user_id: owner.id, project_id: ids[n - 1]!, scopes: ['project.votes.read'] });
    }
    const { application_token: token } = emu.admin.rotateApplicationToken(app.client_id);

    const page1 = await emu.v1('/projects', { bearer: token });
    expect(page1.status).toBe(200);
    expect(page1.body.projects).toEqual([]);
    expect(page1.body.cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    const page2 = await emu.v1(`/projects?cursor=${page1.body.cursor}`, { bearer: token });
    expect(page2.body.projects.map((p: { id: string }) => p.id)).toEqual([ids[149]]);
    expect(page2.body.cursor).toEqual(expect.any(String));
    const page3 = await emu.v1(`/projects?cursor=${page2.body.cursor}`, { bearer: token });
    expect(page3.body.projects.map((p: { id: string }) => p.id)).toEqual([ids[239]]);
    expect(page3.body).not.toHaveProperty('cursor');
  });

  it('resumes after the last scanned project even when earlier ones were deleted', async () => {
    const emu = await startTestEmulator({ settings: { applicationTokenProjectsPageSize: 2 } });
    const owner = emu.admin.createUser({ username: 'owner' });
    const app = emu.admin.createApplication({ redirect_uris: [REDIRECT] });
    const ids = [1, 2, 3, 4, 5].map((i) => emu.admin.createProject({ platform: 'roblox', type: 'game', platform_id: String(i), owner_user_id: owner.id }).project.id);
    for (const id of ids) emu.admin.grantAuthorization({ client_id: app.client_id, user_id: owner.id, project_id: id, scopes: ['project.votes.read'] });
    const { application_token: token } = emu.admin.rotateApplicationToken(app.client_id);
    const page1 = await emu.v1('/projects', { bearer: token });
    expect(page1.body.projects.map((p: { id: string }) => p.id)).toEqual(ids.slice(0, 2));
    emu.admin.deleteProject(ids[0]!);
    const page2 = await emu.v1(`/projects?cursor=${page1.body.cursor}`, { bearer: token });
    expect(page2.body.projects.map((p: { id: string }) => p.id)).toEqual(ids.slice(2, 4));
    const page3 = await emu.v1(`/projects?cursor=${page2.body.cursor}`, { bearer: token });
    expect(page3.body).toEqual({ projects: [{ id: ids[4], platform_id: '5', name: expect.any(String), platform: 'roblox', type: 'game' }] });
  });

  it('answers 400 for a malformed cursor', async () => {
    const { emu, app } = await fixture();
    const { application_token: token } = emu.admin.rotateApplicationToken(app.client_id);
    const notJson = Buffer.from('hello').toString('base64url');
    const negative = Buffer.from(JSON.stringify({ v: 1, at: -1, after: null })).toString('base64url');
    for (const cursor of ['***', notJson, negative]) {
      expectProblem(await emu.v1(`/projects?cursor=${encodeURIComponent(cursor)}`, { bearer: token }), 400);
    }
  });

  it('lists the single project of an access token, without a cursor, and nothing once it is gone', async () => {
    const { emu, owner, project, grant } = await fixture();
    const { access_token } = grant(owner.id, project.id, ['user.identify']);
    const res = await emu.v1('/projects?cursor=whatever', { bearer: access_token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ projects: [{ id: project.id, platform_id: project.platform_id, name: 'Shared', platform: 'discord', type: 'bot' }] });
    emu.admin.deleteProject(project.id);
    expect((await emu.v1('/projects', { bearer: access_token })).body).toEqual({ projects: [] });
  });

  it('refuses project tokens (403) and missing or unknown tokens (401)', async () => {
    const emu = await startTestEmulator();
    const owner = emu.admin.createUser({ username: 'owner' });
    const { project_token } = emu.admin.createProject({ platform: 'discord', type: 'bot', owner_user_id: owner.id });
    expectProblem(await emu.v1('/projects', { bearer: project_token }), 403);
    expectProblem(await emu.v1('/projects'), 401);
    expectProblem(await emu.v1('/projects', { bearer: 'nope' }), 401);
  });
});
