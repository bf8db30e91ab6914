import { describe, expect, it } from 'vitest';
import {
  CredentialError,
  ForbiddenError,
  NotFoundError,
  RateLimitError,
  ServerError,
  UnauthorizedError,
} from '../../../src/api/errors.js';
import { ValidationError } from '../../../src/errors.js';
import { setupClientTest, v1Requests } from '../../helpers/client.js';
import { setupBot } from '../../helpers/emulator.js';

const setup = setupClientTest;


const HOUR = 3600_000;
const NEWS = { title: 'Version 2', content: 'Slash commands are here.' };

describe('announcements.create', () => {
  it('publishes with each credential and answers {title, content, created_at}', async () => {
    const { clock, emu, client } = await setup();
    // The cooldown is per project, so each credential posts to a project of its own.
    const [a, b, c, d] = [setupBot(emu), setupBot(emu), setupBot(emu), setupBot(emu)];
    const { application_token } = emu.admin.rotateApplicationToken(d.clientId);
    const created = [
      await client({ projectToken: a.projectToken }).announcements.create(NEWS),
      await client({ accessToken: b.accessToken }).announcements.create({ ...NEWS, category: 'event' }, b.projectId),
      await client({ accessToken: c.accessToken, projectId: c.projectId }).announcements.create(NEWS),
      await client({ applicationToken: application_token }).announcements.create({ ...NEWS, category: 'new_feature' }, d.projectId),
    ];
    for (const announcement of created) {
      expect(announcement).toEqual({ ...NEWS, created_at: new Date(clock.now()).toISOString() });
    }
    expect([a, b, c, d].map((fx) => emu.admin.announcements(fx.projectId).map((x) => x.category)))
      .toEqual([['announcement'], ['event'], ['announcement'], ['new_feature']]);
    expect(v1Requests(emu).map((r) => [r.method, r.path, r.status])).toEqual([
      ['POST', '/api/v1/projects/@me/announcements', 201],
      ['POST', `/api/v1/projects/${b.projectId}/announcements`, 201],
      ['POST', `/api/v1/projects/${c.projectId}/announcements`, 201],
      ['POST', `/api/v1/projects/${d.projectId}/announcements`, 201],
    ]);
  });

  it('refuses a second announcement within 4 h locally, with a RateLimitError saying how long to wait, and allows it after', async () => {
    const { clock, emu, fx, client } = await setup();
    const api = client({ projectToken: fx.projectToken }).announcements;
    await api.create(NEWS);
    clock.advance(HOUR);
    const error = await api.create(NEWS).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    const limited = error as RateLimitError;
    expect(limited).toMatchObject({ status: 429, method: 'POST', family: 'v1', attempts: 0, retryAfterMs: 3 * HOUR });
    expect(limited.url).toBe(`${emu.urls.v1}/projects/@me/announcements`);
    expect(limited.message).toContain('Wait 10800 s');
    expect(limited.message).toContain('refused locally');
    expect(limited.message).not.toContain(fx.projectToken);
    expect(v1Requests(emu)).toHaveLength(1);

    clock.advance(3 * HOUR);
    await expect(api.create({ ...NEWS, title: 'Version 3' })).resolves.toMatchObject({ title: 'Version 3' });
    expect(v1Requests(emu).map((r) => r.status)).toEqual([201, 201]);
  });

  it('does not retry a 429 from the service, and learns its Retry-After', async () => {
    const { clock, emu, fx, client } = await setup();
    const path = `/api/v1/projects/${fx.projectId}/announcements`;
    emu.admin.injectFault({ path, status: 429, retry_after: 100_000 });
    const api = client({ accessToken: fx.accessToken, projectId: fx.projectId }).announcements;
    const first = await api.create(NEWS).catch((e: unknown) => e);
    expect(first).toBeInstanceOf(RateLimitError);
    expect(first).toMatchObject({ status: 429, attempts: 1, retryAfterMs: 100_000_000 });
    expect(v1Requests(emu)).toHaveLength(1);

    clock.advance(50_000_000);
    await expect(api.create(NEWS)).rejects.toMatchObject({ attempts: 0, retryAfterMs: 50_000_000 });
    expect(v1Requests(emu)).toHaveLength(1);
    clock.advance(50_000_000);
    await expect(api.create(NEWS)).resolves.toMatchObject(NEWS);
    expect(v1Requests(emu).map((r) => r.status)).toEqual([429, 201]);
  });

  it('learns a cooldown begun by another client from the service\'s 429', async () => {
    const { clock, emu, fx, client } = await setup();
    await client({ projectToken: fx.projectToken }).announcements.create(NEWS);
    clock.advance(HOUR);
    const other = client({ accessToken: fx.accessToken }).announcements;
    const error = await other.create(NEWS, fx.projectId).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error).toMatchObject({ attempts: 1, retryAfterMs: 3 * HOUR });
    await expect(other.create(NEWS, fx.projectId)).rejects.toMatchObject({ attempts: 0 });
    expect(v1Requests(emu).map((r) => r.status)).toEqual([201, 429]);
  });

  it('never sends it again after a 502 (it may have been published)', async () => {
    const { emu, fx, client } = await setup();
    emu.admin.injectFault({ path: '/api/v1/projects/@me/announcements', status: 502 });
    const error = await client({ projectToken: fx.projectToken }).announcements.create(NEWS).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServerError);
    expect((error as ServerError).status).toBe(502);
    expect(v1Requests(emu)).toHaveLength(1);
  });

  it('refuses invalid fields locally, naming them, and sends nothing', async () => {
    const { emu, fx, client } = await setup();
    const api = client({ projectToken: fx.projectToken }).announcements;
    const error = await api.create({ title: 'V2', content: 'short', category: 'gossip' as never }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).subject).toBe('request');
    expect((error as ValidationError).issues.map((i) => i.path)).toEqual(['title', 'content', 'category']);
    await expect(api.create(NEWS, fx.projectId)).rejects.toBeInstanceOf(CredentialError);
    expect(v1Requests(emu)).toEqual([]);
  });

  it('raises 403 without project.announcements.write, 404 for another project, 401 when revoked, and learns no cooldown', async () => {
    const { emu, fx, client } = await setup(['project.information.read']);
    const api = client({ accessToken: fx.accessToken }).announcements;
    await expect(api.create(NEWS, fx.projectId)).rejects.toSatisfy((e) => e instanceof ForbiddenError && e.status === 403);
    const other = setupBot(emu);
    await expect(api.create(NEWS, other.projectId)).rejects.toSatisfy((e) => e instanceof NotFoundError && e.status === 404);
    emu.admin.revokeUserAuthorizations(fx.ownerId, fx.clientId);
    await expect(api.create(NEWS, fx.projectId)).rejects.toSatisfy((e) => e instanceof UnauthorizedError && e.status === 401);
    expect(v1Requests(emu)).toHaveLength(3);
  });
});
