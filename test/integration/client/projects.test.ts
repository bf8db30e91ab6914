import { describe, expect, it } from 'vitest';
import { CredentialError, ForbiddenError, NotFoundError, UnauthorizedError } from '../../../src/api/errors.js';
import { SCOPES } from '../../../src/contract/limits.js';
import { ValidationError } from '../../../src/errors.js';
import { collect, setupClientTest, v1Requests } from '../../helpers/client.js';
import { setupBot } from '../../helpers/emulator.js';

/** An emulator whose clock is the client's fake clock, a bot fixture, and a client maker. */
const setup = setupClientTest;

/** v1 requests the emulator saw (admin calls are not HTTP, so not logged). */


const DETAIL_KEYS = ['headline', 'id', 'name', 'platform', 'review_count', 'review_score', 'tags', 'type', 'votes', 'votes_total'];

describe('projects.get', () => {
  it('reads the detail with each credential: project token (@me), OAuth (explicit and default ID), application token', async () => {
    const { emu, fx, client } = await setup();
    const { application_token } = emu.admin.rotateApplicationToken(fx.clientId);
    const results = [
      await client({ projectToken: fx.projectToken }).projects.get(),
      await client({ accessToken: fx.accessToken }).projects.get(fx.projectId),
      await client({ accessToken: fx.accessToken, projectId: fx.projectId }).projects.get(),
      await client({ applicationToken: application_token }).projects.get(fx.projectId),
    ];
    for (const project of results) {
      expect(project).toMatchObject({ id: fx.projectId, name: 'Test Bot', platform: 'discord', type: 'bot', votes: 0, votes_total: 0 });
      expect(Object.keys(project).sort()).toEqual(DETAIL_KEYS);
    }
    expect(v1Requests(emu).map((r) => [r.path, r.credential])).toEqual([
      ['/api/v1/projects/@me', 'project'],
      [`/api/v1/projects/${fx.projectId}`, 'oauth'],
      [`/api/v1/projects/${fx.projectId}`, 'oauth'],
      [`/api/v1/projects/${fx.projectId}`, 'application'],
    ]);
  });

  it('raises 403 ForbiddenError without project.information.read, 404 NotFoundError for a project not granted, 401 when revoked', async () => {
    const { emu, fx, client } = await setup(SCOPES.filter((s) => s !== 'project.information.read'));
    const oauth = client({ accessToken: fx.accessToken });
    await expect(oauth.projects.get(fx.projectId)).rejects.toSatisfy((e) => e instanceof ForbiddenError && e.status === 403);
    const other = setupBot(emu);
    await expect(oauth.projects.get(other.projectId)).rejects.toSatisfy((e) => e instanceof NotFoundError && e.status === 404);
    emu.admin.revokeUserAuthorizations(fx.ownerId, fx.clientId);
    const error = await oauth.projects.get(fx.projectId).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnauthorizedError);
    expect((error as UnauthorizedError).status).toBe(401);
    expect((error as Error).message).not.toContain(fx.accessToken);
  });

  it('raises 404 NotFoundError when the project token\'s project no longer exists', async () => {
    const { emu, fx, client } = await setup();
    emu.admin.deleteProject(fx.projectId);
    await expect(client({ projectToken: fx.projectToken }).projects.get()).rejects.toBeInstanceOf(NotFoundError);
  });

  it('refuses locally, without a request, a project token with an explicit ID and OAuth without any ID', async () => {
    const { emu, fx, client } = await setup();
    await expect(client({ projectToken: fx.projectToken }).projects.get(fx.projectId)).rejects.toThrow(CredentialError);
    await expect(client({ projectToken: fx.projectToken }).projects.get(fx.projectId)).rejects.toThrow(/@me/);
    await expect(client({ accessToken: fx.accessToken }).projects.get()).rejects.toThrow(CredentialError);
    expect(v1Requests(emu)).toEqual([]);
  });
});

describe('projects.update', () => {
  it('patches the headline per locale with each credential', async () => {
    const { emu, fx, client } = await setup();
    const { application_token } = emu.admin.rotateApplicationToken(fx.clientId);
    await client({ projectToken: fx.projectToken }).projects.update({ headline: { de: 'Ein kleiner Bot' } });
    await client({ accessToken: fx.accessToken }).projects.update({ headline: { fr: 'Un petit bot' } }, fx.projectId);
    await client({ accessToken: fx.accessToken, projectId: fx.projectId }).projects.update({ page_content: { en: 'x'.repeat(300) } });
    await client({ applicationToken: application_token }).projects.update({ headline: { en: 'A small bot' } }, fx.projectId);
    const stored = emu.admin.getProject(fx.projectId);
    expect(stored.headline).toMatchObject({ de: 'Ein kleiner Bot', fr: 'Un petit bot', en: 'A small bot' });
    expect(stored.page_content.en).toBe('x'.repeat(300));
    expect(v1Requests(emu).map((r) => [r.method, r.status])).toEqual(Array(4).fill(['PATCH', 204]));
  });

  it('refuses locally what the service would answer 422, naming the field, and sends nothing', async () => {
    const { emu, fx, client } = await setup();
    const api = client({ projectToken: fx.projectToken }).projects;
    const cases: [unknown, string][] = [
      [{ headline: { en: 'ab' } }, 'headline.en'],
      [{ headline: { xx: 'A fine headline' } }, 'headline.xx'],
      [{ page_content: { en: 'too short' } }, 'page_content.en'],
      [{}, ''],
    ];
    for (const [edit, path] of cases) {
      const error = await api.update(edit as never).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).subject).toBe('request');
      expect((error as ValidationError).issues.map((i) => i.path)).toContain(path);
    }
    expect(v1Requests(emu)).toEqual([]);
  });

  it('raises 403 without project.information.write and 401 for an unknown token', async () => {
    const { emu, fx, client } = await setup(['project.information.read']);
    await expect(client({ accessToken: fx.accessToken }).projects.update({ headline: { en: 'A small bot' } }, fx.projectId))
      .rejects.toSatisfy((e) => e instanceof ForbiddenError && e.status === 403);
    await expect(client({ accessToken: 'not-a-token' }).projects.update({ headline: { en: 'A small bot' } }, fx.projectId))
      .rejects.toSatisfy((e) => e instanceof UnauthorizedError && e.status === 401);
    expect(emu.admin.getProject(fx.projectId).headline.en).not.toBe('A small bot');
  });
});

describe('projects.list and listPage', () => {
  it('lists the one project of an OAuth authorization, without a cursor', async () => {
    const { fx, client } = await setup();
    const api = client({ accessToken: fx.accessToken }).projects;
    const page = await api.listPage();
    expect(page).toEqual({ projects: [{ id: fx.projectId, platform_id: fx.platformId, name: 'Test Bot', platform: 'discord', type: 'bot' }] });
    expect(await collect(api.list())).toEqual(page.projects);
  });

  it('refuses a project token locally, saying which credential the call needs, and sends nothing', async () => {
    const { emu, fx, client } = await setup();
    const api = client({ projectToken: fx.projectToken }).projects;
    await expect(collect(api.list())).rejects.toThrow(CredentialError);
    await expect(api.listPage()).rejects.toThrow(/an OAuth access token or an application token/);
    expect(v1Requests(emu)).toEqual([]);
  });

  it.each([
    ['an empty first page', [150, 240], [0, 1, 1]],
    ['an empty middle page', [10, 240], [1, 0, 1]],
  ])('pages an application token\'s 250 projects across %s', async (_name, granted, sizes) => {
    const { emu, fx, client } = await setup();
    // The fixture's own project is #0; 249 more make 250, scanned 100 per page.
    const ids = [fx.projectId];
    for (let i = 1; i < 250; i += 1) {
      ids.push(emu.admin.createProject({ platform: 'discord', type: 'bot', owner_user_id: fx.ownerId, name: `Bot ${i}` }).project.id);
    }
    emu.admin.revokeUserAuthorizations(fx.ownerId, fx.clientId);
    for (const index of granted) {
      emu.admin.grantAuthorization({ client_id: fx.clientId, user_id: fx.ownerId, project_id: ids[index]!, scopes: ['project.information.read'] });
    }
    const { application_token } = emu.admin.rotateApplicationToken(fx.clientId);
    const api = client({ applicationToken: application_token }).projects;
    const listed = await collect(api.list());
    expect(listed.map((p) => p.id)).toEqual(granted.map((index) => ids[index]));
    expect(listed.map((p) => p.name)).toEqual(granted.map((index) => `Bot ${index}`));
    const pages = v1Requests(emu);
    expect(pages.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(pages[0]!.query).toBe('');
    expect(pages.slice(1).every((r) => r.query.startsWith('?cursor='))).toBe(true);

    // listPage walks the same pages by hand.
    const first = await api.listPage();
    const second = await api.listPage(first.cursor);
    const third = await api.listPage(second.cursor);
    expect([first, second, third].map((p) => p.projects.length)).toEqual(sizes);
    expect(third.cursor).toBeUndefined();
  });

  it('raises 401 UnauthorizedError for a rotated application token', async () => {
    const { emu, fx, client } = await setup();
    const { application_token } = emu.admin.rotateApplicationToken(fx.clientId);
    emu.admin.rotateApplicationToken(fx.clientId);
    await expect(collect(client({ applicationToken: application_token }).projects.list()))
      .rejects.toSatisfy((e) => e instanceof UnauthorizedError && e.status === 401);
  });
});
