import { describe, expect, it } from 'vitest';
import { SCOPES } from '../../../src/contract/limits.js';
import { ConflictError, CredentialError, ForbiddenError, NotFoundError } from '../../../src/api/errors.js';
import { clientFor, loggedV1, losingFirstAnswer } from '../../helpers/client.js';
import { setupBot, startTestEmulator, type BotFixture, type TestEmulator } from '../../helpers/emulator.js';
import { startReceiver, type ReceivedRequest, type ReceiverAnswer, type TestReceiver } from '../../helpers/receiver.js';
import { verifySignature } from '../../helpers/verify-signature.js';

const SETTINGS = { allowHttpLoopback: true, deliveryRetryDelaysMs: [20, 40, 80], deliveryTimeoutMs: 300 };

interface Setup {
  emu: TestEmulator;
  fx: BotFixture;
  /** The integration's endpoint: answers the handshake, gets `integration.delete`. */
  endpoint: TestReceiver;
  integrationId: string;
  /** `/projects/:id/integrations/:integration_id` below `/api/v1`. */
  path: string;
}

/** An emulator with a bot and an integration whose endpoint accepts the handshake unless `handshake` says otherwise. */
async function setup(handshake?: (request: ReceivedRequest) => ReceiverAnswer): Promise<Setup> {
  const emu = await startTestEmulator({ settings: SETTINGS });
  const fx = setupBot(emu);
  const endpoint = await startReceiver((request) => {
    if (request.json?.type !== 'integration.create') return { status: 200 };
    return handshake?.(request) ?? { status: 200, json: { webhook_url: 'https://example.com/votes', routes: ['vote.create'] } };
  });
  const integration = emu.admin.createIntegration({
    name: 'Vote Relay',
    description: 'Relays votes',
    icon_url: 'https://cdn.example.com/relay.png',
    url: endpoint.url,
  });
  return { emu, fx, endpoint, integrationId: integration.id, path: `/projects/${fx.projectId}/integrations/${integration.id}` };
}

const logged = loggedV1;


describe('client.integrations', () => {
  it('lists, connects through the handshake, and disconnects with a signed integration.delete', async () => {
    const { emu, fx, endpoint, integrationId } = await setup();
    const client = clientFor(emu, { accessToken: fx.accessToken, projectId: fx.projectId });
    expect(await client.integrations.list()).toEqual([
      { id: integrationId, name: 'Vote Relay', description: 'Relays votes', icon_url: 'https://cdn.example.com/relay.png', connected: false },
    ]);

    await client.integrations.connect(integrationId);
    expect(endpoint.requests.map((r) => r.json.type)).toEqual(['integration.create']);
    const secret: string = endpoint.requests[0]!.json.data.webhook_secret;
    expect((await client.integrations.list()).map((i) => i.connected)).toEqual([true]);

    await client.integrations.disconnect(integrationId);
    const [, deleted] = await endpoint.waitFor(2);
    expect(deleted!.json.type).toBe('integration.delete');
    expect(verifySignature(deleted!, secret).valid).toBe(true);
    expect((await client.integrations.list()).map((i) => i.connected)).toEqual([false]);
  });

  it('works with an application token and an explicit project ID', async () => {
    const { emu, fx, integrationId, path } = await setup();
    const { application_token } = emu.admin.rotateApplicationToken(fx.clientId);
    const client = clientFor(emu, { applicationToken: application_token });
    await client.integrations.connect(integrationId, fx.projectId);
    expect((await client.integrations.list(fx.projectId)).map((i) => i.connected)).toEqual([true]);
    await client.integrations.disconnect(integrationId, fx.projectId);
    expect(logged(emu, 'PUT', path).map((r) => r.credential)).toEqual(['application']);
    await expect(client.integrations.list()).rejects.toBeInstanceOf(CredentialError);
  });

  it('409 ConflictError when the handshake is rejected or the integration is already connected', async () => {
    let accept = false;
    const { emu, fx, integrationId } = await setup(() =>
      accept ? { status: 200, json: { webhook_url: 'https://example.com/v', routes: ['vote.create'] } } : { status: 503 },
    );
    const client = clientFor(emu, { accessToken: fx.accessToken, projectId: fx.projectId });
    const rejected = await client.integrations.connect(integrationId).catch((e: unknown) => e);
    expect(rejected).toBeInstanceOf(ConflictError);
    expect((rejected as ConflictError).status).toBe(409);
    expect((rejected as ConflictError).problem?.detail).toMatch(/handshake rejected/);

    accept = true;
    await client.integrations.connect(integrationId);
    const again = await client.integrations.connect(integrationId).catch((e: unknown) => e);
    expect(again).toBeInstanceOf(ConflictError);
    expect((again as ConflictError).problem?.detail).toMatch(/already connected/);
  });

  it('404 NotFoundError for an unknown integration, or one this application did not connect', async () => {
    const { emu, fx, integrationId } = await setup();
    const client = clientFor(emu, { accessToken: fx.accessToken, projectId: fx.projectId });
    for (const attempt of [
      client.integrations.connect('123456789012345678'),
      client.integrations.disconnect('123456789012345678'),
      client.integrations.disconnect(integrationId),
    ]) {
      const error = await attempt.catch((e: unknown) => e);
      expect(error).toBeInstanceOf(NotFoundError);
      expect((error as NotFoundError).status).toBe(404);
    }
    await client.integrations.connect(integrationId);
    const app = emu.admin.createApplication({ redirect_uris: ['http://127.0.0.1:1/other'] });
    const grant = emu.admin.grantAuthorization({ client_id: app.client_id, user_id: fx.ownerId, project_id: fx.projectId, scopes: [...SCOPES] });
    const other = clientFor(emu, { accessToken: grant.access_token, projectId: fx.projectId });
    await expect(other.integrations.disconnect(integrationId)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('403 ForbiddenError without the write scope', async () => {
    const emu = await startTestEmulator({ settings: SETTINGS });
    const fx = setupBot(emu, { scopes: ['project.integrations.read'] });
    const integration = emu.admin.createIntegration({ name: 'X', url: 'https://example.com/x' });
    const client = clientFor(emu, { accessToken: fx.accessToken, projectId: fx.projectId });
    expect(await client.integrations.list()).toHaveLength(1);
    const error = await client.integrations.connect(integration.id).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ForbiddenError);
    expect((error as ForbiddenError).status).toBe(403);
  });

  it('refuses a project token locally, sending nothing', async () => {
    const { emu, fx, integrationId } = await setup();
    const client = clientFor(emu, { projectToken: fx.projectToken });
    for (const call of [
      () => client.integrations.list(),
      () => client.integrations.connect(integrationId),
      () => client.integrations.disconnect(integrationId),
    ]) {
      const error = await call().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CredentialError);
      expect((error as Error).message).toMatch(/OAuth access token or an application token/);
    }
    expect(emu.admin.requests()).toEqual([]);
  });

  it('retries a connect and a disconnect on 502 (PUT and DELETE)', async () => {
    const { emu, fx, integrationId, path, endpoint } = await setup();
    const client = clientFor(emu, { accessToken: fx.accessToken, projectId: fx.projectId });
    emu.admin.injectFault({ method: 'PUT', path: `/api/v1${path}`, status: 502 });
    await client.integrations.connect(integrationId);
    expect(logged(emu, 'PUT', path).map((r) => r.status)).toEqual([502, 204]);
    expect(endpoint.requests).toHaveLength(1);
    emu.admin.injectFault({ method: 'DELETE', path: `/api/v1${path}`, status: 503 });
    await client.integrations.disconnect(integrationId);
    expect(logged(emu, 'DELETE', path).map((r) => r.status)).toEqual([503, 204]);
  });

  it('settles a connect whose answer was lost: the retry meets 409 and the list shows it connected', async () => {
    const { emu, fx, integrationId, path } = await setup();
    expect((await emu.v1(path, { method: 'PUT', bearer: fx.accessToken })).status).toBe(204);
    const client = clientFor(emu, { accessToken: fx.accessToken, projectId: fx.projectId, dispatcher: losingFirstAnswer(emu, 'PUT', path) });
    await client.integrations.connect(integrationId);
    expect(logged(emu, 'PUT', path).map((r) => r.status)).toEqual([204, 409]);
  });

  it('settles a disconnect whose answer was lost: the retry meets 404 and the list shows it disconnected', async () => {
    const { emu, fx, integrationId, path } = await setup();
    expect((await emu.v1(path, { method: 'PUT', bearer: fx.accessToken })).status).toBe(204);
    expect((await emu.v1(path, { method: 'DELETE', bearer: fx.accessToken })).status).toBe(204);
    const client = clientFor(emu, { accessToken: fx.accessToken, projectId: fx.projectId, dispatcher: losingFirstAnswer(emu, 'DELETE', path) });
    await client.integrations.disconnect(integrationId);
    expect(logged(emu, 'DELETE', path).map((r) => r.status)).toEqual([204, 404]);
  });

  it('keeps the 409 of a retried connect when the list does not show it connected', async () => {
    // The handshake is rejected: the retry's 409 is not "already connected", and the list says so.
    const { emu, fx, integrationId, path } = await setup(() => ({ status: 500 }));
    const client = clientFor(emu, { accessToken: fx.accessToken, projectId: fx.projectId, dispatcher: losingFirstAnswer(emu, 'PUT', path) });
    const error = await client.integrations.connect(integrationId).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConflictError);
    expect((error as ConflictError).attempts).toBe(2);
  });
});
