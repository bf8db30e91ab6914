import { describe, expect, it } from 'vitest';
import { SCOPES } from '../../../src/contract/limits.js';
import { ConflictError, CredentialError, ForbiddenError, NotFoundError, ServerError, UnprocessableEntityError } from '../../../src/api/errors.js';
import { ValidationError } from '../../../src/errors.js';
import { clientFor, loggedV1, losingFirstAnswer } from '../../helpers/client.js';
import { setupBot, startTestEmulator, type BotFixture, type TestEmulator } from '../../helpers/emulator.js';
import { startReceiver } from '../../helpers/receiver.js';
import { verifySignature } from '../../helpers/verify-signature.js';

const SETTINGS = { allowHttpLoopback: true, deliveryRetryDelaysMs: [20, 40, 80], deliveryTimeoutMs: 300 };

async function setup(settings: Partial<typeof SETTINGS> = SETTINGS): Promise<{ emu: TestEmulator; fx: BotFixture }> {
  const emu = await startTestEmulator({ settings });
  return { emu, fx: setupBot(emu) };
}

/** A second application granted on the same project by the same owner; its access token. */
function secondApp(emu: TestEmulator, fx: BotFixture): string {
  const app = emu.admin.createApplication({ redirect_uris: ['http://127.0.0.1:1/other'] });
  return emu.admin.grantAuthorization({ client_id: app.client_id, user_id: fx.ownerId, project_id: fx.projectId, scopes: [...SCOPES] })
    .access_token;
}

const logged = loggedV1;


describe('client.webhooks', () => {
  it('creates, lists, rotates and deletes; the secret only comes with create and rotate', async () => {
    const { emu, fx } = await setup();
    const client = clientFor(emu, { accessToken: fx.accessToken, projectId: fx.projectId });
    const created = await client.webhooks.create({ label: 'votes', url: 'https://example.com/hook' });
    expect(created).toEqual({ id: expect.any(String), label: 'votes', url: 'https://example.com/hook', secret: expect.stringMatching(/^whs_/) });
    expect(await client.webhooks.list()).toEqual([{ id: created.id, label: 'votes', url: 'https://example.com/hook' }]);

    const rotated = await client.webhooks.rotate(created.id);
    expect(rotated).toEqual({ secret: expect.stringMatching(/^whs_/) });
    expect(rotated.secret).not.toBe(created.secret);

    await client.webhooks.delete(created.id);
    expect(await client.webhooks.list()).toEqual([]);
    // A first attempt's 404 is final.
    const again = await client.webhooks.delete(created.id).catch((e: unknown) => e);
    expect(again).toBeInstanceOf(NotFoundError);
    expect((again as NotFoundError).status).toBe(404);
  });

  it('takes the project ID per call', async () => {
    const { emu, fx } = await setup();
    const client = clientFor(emu, { accessToken: fx.accessToken });
    await client.webhooks.create({ label: 'a', url: 'https://example.com/a' }, fx.projectId);
    expect(await client.webhooks.list(fx.projectId)).toHaveLength(1);
    expect(logged(emu, 'GET', `/projects/${fx.projectId}/webhooks`)).toHaveLength(1);
    await expect(client.webhooks.list()).rejects.toBeInstanceOf(CredentialError);
  });

  it('tests a webhook: resolves when the destination accepted a signed webhook.test, 409 when it rejected it', async () => {
    const { emu, fx } = await setup();
    let status = 200;
    const receiver = await startReceiver(() => ({ status }));
    const client = clientFor(emu, { accessToken: fx.accessToken, projectId: fx.projectId });
    const created = await client.webhooks.create({ label: 'local', url: receiver.url, allowHttpLoopback: true });
    await client.webhooks.test(created.id);
    expect(receiver.requests).toHaveLength(1);
    expect(receiver.requests[0]!.json.type).toBe('webhook.test');
    expect(verifySignature(receiver.requests[0]!, created.secret).valid).toBe(true);

    status = 500;
    const rejected = await client.webhooks.test(created.id).catch((e: unknown) => e);
    expect(rejected).toBeInstanceOf(ConflictError);
    expect((rejected as ConflictError).status).toBe(409);
    expect((rejected as ConflictError).attempts).toBe(1);
  });

  it('409 ConflictError at the webhook limit', async () => {
    const { emu, fx } = await setup();
    const client = clientFor(emu, { accessToken: fx.accessToken, projectId: fx.projectId });
    for (let i = 0; i < 5; i += 1) await client.webhooks.create({ label: `w${i}`, url: `https://example.com/${i}` });
    const sixth = await client.webhooks.create({ label: 'w5', url: 'https://example.com/5' }).catch((e: unknown) => e);
    expect(sixth).toBeInstanceOf(ConflictError);
    expect((sixth as ConflictError).status).toBe(409);
    expect((sixth as ConflictError).problem?.detail).toMatch(/limit/);
  });

  it("404 NotFoundError for another application's webhook (delete, rotate, test)", async () => {
    const { emu, fx } = await setup();
    const other = clientFor(emu, { accessToken: secondApp(emu, fx), projectId: fx.projectId });
    const theirs = await other.webhooks.create({ label: 'theirs', url: 'https://example.com/t' });
    const client = clientFor(emu, { accessToken: fx.accessToken, projectId: fx.projectId });
    expect(await client.webhooks.list()).toEqual([]);
    for (const attempt of [client.webhooks.delete(theirs.id), client.webhooks.rotate(theirs.id), client.webhooks.test(theirs.id)]) {
      const error = await attempt.catch((e: unknown) => e);
      expect(error).toBeInstanceOf(NotFoundError);
      expect((error as NotFoundError).status).toBe(404);
    }
    expect(await other.webhooks.list()).toEqual([{ id: theirs.id, label: 'theirs', url: 'https://example.com/t' }]);
  });

  it('403 ForbiddenError without the write scope', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu, { scopes: ['project.webhooks.read'] });
    const client = clientFor(emu, { accessToken: fx.accessToken, projectId: fx.projectId });
    expect(await client.webhooks.list()).toEqual([]);
    const error = await client.webhooks.create({ label: 'x', url: 'https://example.com/x' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ForbiddenError);
    expect((error as ForbiddenError).status).toBe(403);
  });

  it('422 UnprocessableEntityError when the service refuses a URL the client was told to allow', async () => {
    // The emulator accepts https only here; the client was asked to allow http on loopback.
    const { emu, fx } = await setup({});
    const client = clientFor(emu, { accessToken: fx.accessToken, projectId: fx.projectId });
    const error = await client.webhooks.create({ label: 'x', url: 'http://127.0.0.1:9/x', allowHttpLoopback: true }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnprocessableEntityError);
    expect((error as UnprocessableEntityError).status).toBe(422);
  });

  it('refuses a project token or an application token locally, sending nothing', async () => {
    const { emu, fx } = await setup();
    const { application_token } = emu.admin.rotateApplicationToken(fx.clientId);
    for (const options of [{ projectToken: fx.projectToken }, { applicationToken: application_token }]) {
      const client = clientFor(emu, options);
      for (const call of [
        () => client.webhooks.list(fx.projectId),
        () => client.webhooks.create({ label: 'x', url: 'https://example.com/x' }, fx.projectId),
        () => client.webhooks.delete('1', fx.projectId),
        () => client.webhooks.rotate('1', fx.projectId),
        () => client.webhooks.test('1', fx.projectId),
      ]) {
        const error = await call().catch((e: unknown) => e);
        expect(error).toBeInstanceOf(CredentialError);
        expect((error as Error).message).toMatch(/OAuth access token/);
      }
    }
    expect(emu.admin.requests()).toEqual([]);
  });

  it('checks the label and URL before sending: http:// needs allowHttpLoopback', async () => {
    const { emu, fx } = await setup();
    const client = clientFor(emu, { accessToken: fx.accessToken, projectId: fx.projectId });
    const http = await client.webhooks.create({ label: 'x', url: 'http://127.0.0.1:9/hook' }).catch((e: unknown) => e);
    expect(http).toBeInstanceOf(ValidationError);
    expect((http as ValidationError).subject).toBe('request');
    expect((http as ValidationError).issues.map((i) => i.path)).toEqual(['url']);

    const both = await client.webhooks.create({ label: 'l'.repeat(101), url: 'ftp://example.com' }).catch((e: unknown) => e);
    expect((both as ValidationError).issues.map((i) => i.path)).toEqual(['label', 'url']);
    const remote = await client.webhooks.create({ label: 'x', url: 'http://example.com/hook', allowHttpLoopback: true }).catch((e: unknown) => e);
    expect(remote).toBeInstanceOf(ValidationError);
    const nothing = await client.webhooks.create(null as never).catch((e: unknown) => e);
    expect((nothing as ValidationError).issues.map((i) => i.path)).toEqual(['label', 'url']);
    const empty = await client.webhooks.rotate('').catch((e: unknown) => e);
    expect((empty as ValidationError).issues).toEqual([{ path: 'webhookId', message: expect.any(String) }]);
    expect(emu.admin.requests()).toEqual([]);
  });

  it('never retries a create or a rotation after sending: 502 is a ServerError after 1 request', async () => {
    const { emu, fx } = await setup();
    const client = clientFor(emu, { accessToken: fx.accessToken, projectId: fx.projectId });
    const path = `/projects/${fx.projectId}/webhooks`;
    emu.admin.injectFault({ method: 'POST', path: `/api/v1${path}`, status: 502 });
    const error = await client.webhooks.create({ label: 'x', url: 'https://example.com/x' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServerError);
    expect((error as ServerError).status).toBe(502);
    expect(logged(emu, 'POST', path)).toHaveLength(1);
    expect(emu.context.state.webhooks.size).toBe(0);

    const created = await client.webhooks.create({ label: 'x', url: 'https://example.com/x' });
    emu.admin.injectFault({ method: 'POST', path: `/api/v1${path}/${created.id}/rotate`, status: 503 });
    await expect(client.webhooks.rotate(created.id)).rejects.toBeInstanceOf(ServerError);
    expect(logged(emu, 'POST', `${path}/${created.id}/rotate`)).toHaveLength(1);
  });

  it('retries a delete and a test on 502', async () => {
    const { emu, fx } = await setup();
    const receiver = await startReceiver();
    const client = clientFor(emu, { accessToken: fx.accessToken, projectId: fx.projectId });
    const path = `/projects/${fx.projectId}/webhooks`;
    const created = await client.webhooks.create({ label: 'x', url: receiver.url, allowHttpLoopback: true });
    emu.admin.injectFault({ method: 'POST', path: `/api/v1${path}/${created.id}/test`, status: 502 });
    await client.webhooks.test(created.id);
    expect(logged(emu, 'POST', `${path}/${created.id}/test`)).toHaveLength(2);
    emu.admin.injectFault({ method: 'DELETE', path: `/api/v1${path}/${created.id}`, status: 502 });
    await client.webhooks.delete(created.id);
    expect(logged(emu, 'DELETE', `${path}/${created.id}`)).toHaveLength(2);
    expect(await client.webhooks.list()).toEqual([]);
  });

  it('settles a delete whose answer was lost: the retry meets 404 and the list confirms it is gone', async () => {
    const { emu, fx } = await setup();
    const path = `/projects/${fx.projectId}/webhooks`;
    const created = await emu.v1(path, { bearer: fx.accessToken, json: { label: 'x', url: 'https://example.com/x' } });
    const id: string = created.body.id;
    // The service deletes; the client sees 502 and retries into a 404.
    expect((await emu.v1(`${path}/${id}`, { method: 'DELETE', bearer: fx.accessToken })).status).toBe(204);
    const dispatcher = losingFirstAnswer(emu, 'DELETE', `${path}/${id}`);
    const client = clientFor(emu, { accessToken: fx.accessToken, projectId: fx.projectId, dispatcher });
    await client.webhooks.delete(id);
    expect(logged(emu, 'DELETE', `${path}/${id}`).map((r) => r.status)).toEqual([204, 404]);
    expect(logged(emu, 'GET', path)).toHaveLength(1);
  });

  it('keeps the 404 of a retried delete when the webhook is still listed', async () => {
    const { emu, fx } = await setup();
    const path = `/projects/${fx.projectId}/webhooks`;
    const theirs = await emu.v1(path, { bearer: secondApp(emu, fx), json: { label: 'x', url: 'https://example.com/x' } });
    const id: string = theirs.body.id;
    // The check lists the webhook as still there (a mocked answer), so the 404 stands.
    const dispatcher = losingFirstAnswer(emu, 'DELETE', `${path}/${id}`);
    dispatcher.get(emu.urls.origin).intercept({ method: 'GET', path: `/api/v1${path}` }).reply(200, [{ id, label: 'x', url: 'https://example.com/x' }]);
    const client = clientFor(emu, { accessToken: fx.accessToken, projectId: fx.projectId, dispatcher });
    const error = await client.webhooks.delete(id).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotFoundError);
    expect((error as NotFoundError).attempts).toBe(2);
  });
});
