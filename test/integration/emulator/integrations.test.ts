import { describe, expect, it } from 'vitest';
import { SCOPES } from '../../../src/contract/limits.js';
import { setupBot, startTestEmulator, type BotFixture, type TestEmulator } from '../../helpers/emulator.js';
import { verifySignature } from '../../helpers/verify-signature.js';
import { startReceiver, type ReceivedRequest, type ReceiverAnswer, type TestReceiver } from '../../helpers/receiver.js';

const SETTINGS = { allowHttpLoopback: true, deliveryRetryDelaysMs: [20, 40, 80], deliveryTimeoutMs: 300 };


interface Setup {
  emu: TestEmulator;
  fx: BotFixture;
  /** The integration's endpoint (handshake and `integration.delete`). */
  integrationEndpoint: TestReceiver;
  /** Where the integration asks votes to be delivered. */
  voteEndpoint: TestReceiver;
  integrationId: string;
  path: string;
}

/**
 * An emulator with a bot and one integration. The integration accepts the handshake with
 * `{webhook_url: voteEndpoint.url, routes: ['vote.create']}` unless `handshake` says otherwise.
 */
async function setup(handshake?: (request: ReceivedRequest, index: number) => ReceiverAnswer): Promise<Setup> {
  const emu = await startTestEmulator({ settings: SETTINGS });
  const fx = setupBot(emu);
  const voteEndpoint = await startReceiver();
  const integrationEndpoint = await startReceiver((request, index) => {
    if (request.json?.type === 'integration.create') {
      return handshake?.(request, index) ?? { status: 200, json: { webhook_url: voteEndpoint.url, routes: ['vote.create'] } };
    }
    return { status: 200 };
  });
  const integration = emu.admin.createIntegration({
    name: 'Vote Relay',
    description: 'Relays votes',
    icon_url: 'https://cdn.example.com/relay.png',
    url: integrationEndpoint.url,
  });
  const path = `/projects/${fx.projectId}/integrations/${integration.id}`;
  return { emu, fx, integrationEndpoint, voteEndpoint, integrationId: integration.id, path };
}

function secondApp(emu: TestEmulator, fx: BotFixture): string {
  const app = emu.admin.createApplication({ redirect_uris: ['http://127.0.0.1:1/other'] });
  return emu.admin.grantAuthorization({ client_id: app.client_id, user_id: fx.ownerId, project_id: fx.projectId, scopes: [...SCOPES] })
    .access_token;
}

async function listConnected(emu: TestEmulator, fx: BotFixture, token: string): Promise<boolean[]> {
  const res = await emu.v1(`/projects/${fx.projectId}/integrations`, { bearer: token });
  expect(res.status).toBe(200);
  return res.body.map((i: { connected: boolean }) => i.connected);
}

describe('v1 integrations', () => {
  it('lists integrations with connected false, then true after a connection', async () => {
    const { emu, fx, path, integrationId } = await setup();
    const before = await emu.v1(`/projects/${fx.projectId}/integrations`, { bearer: fx.accessToken });
    expect(before.status).toBe(200);
    expect(before.body).toEqual([
      { id: integrationId, name: 'Vote Relay', description: 'Relays votes', icon_url: 'https://cdn.example.com/relay.png', connected: false },
    ]);
    expect((await emu.v1(path, { method: 'PUT', bearer: fx.accessToken })).status).toBe(204);
    expect(await listConnected(emu, fx, fx.accessToken)).toEqual([true]);
    // Connected is per project.
    const other = emu.admin.createProject({ platform: 'discord', type: 'bot', owner_user_id: fx.ownerId });
    const grant = emu.admin.grantAuthorization({ client_id: fx.clientId, user_id: fx.ownerId, project_id: other.project.id, scopes: [...SCOPES] });
    const otherList = await emu.v1(`/projects/${other.project.id}/integrations`, { bearer: grant.access_token });
    expect(otherList.body.map((i: { connected: boolean }) => i.connected)).toEqual([false]);
  });

  it('runs a signed handshake; later votes reach the returned webhook_url signed with the handshake secret', async () => {
    const { emu, fx, path, integrationEndpoint, voteEndpoint } = await setup();
    const res = await emu.v1(path, { method: 'PUT', bearer: fx.accessToken });
    expect(res.status).toBe(204);

    expect(integrationEndpoint.requests).toHaveLength(1);
    const [handshake] = integrationEndpoint.requests;
    const body = JSON.parse(handshake!.rawBody.toString('utf8'));
    expect(body).toEqual({
      type: 'integration.create',
      data: {
        connection_id: expect.stringMatching(/^\d+$/),
        webhook_secret: expect.stringMatching(/^whs_/),
        project: { id: fx.projectId, type: 'bot', platform: 'discord', platform_id: fx.platformId },
        user: { id: fx.ownerId, platform_id: fx.ownerPlatformId, name: 'owner', avatar_url: null },
      },
    });
    const secret: string = body.data.webhook_secret;
    expect(verifySignature(handshake!, secret).valid).toBe(true);
    expect(verifySignature(handshake!, 'whs_other').valid).toBe(false);
    expect(handshake!.headers['x-topgg-trace']).toMatch(/\S/);

    const voter = emu.admin.createUser({ username: 'voter' });
    const vote = emu.admin.castVote({ project_id: fx.projectId, user_id: voter.id });
    const [delivered] = await voteEndpoint.waitFor(1);
    expect(delivered!.json).toMatchObject({ type: 'vote.create', data: { id: vote.id } });
    expect(verifySignature(delivered!, secret).valid).toBe(true);

    // The integration's webhook is not the application's: not listed among its webhooks.
    expect((await emu.v1(`/projects/${fx.projectId}/webhooks`, { bearer: fx.accessToken })).body).toEqual([]);
    const [webhook] = [...emu.context.state.webhooks.values()];
    expect(webhook).toMatchObject({ client_id: null, connection_id: body.data.connection_id, label: 'Vote Relay', url: voteEndpoint.url });
  });

  it('rejects a handshake answered with a non-2xx status: 409 after one try, nothing connected', async () => {
    const { emu, fx, path, integrationEndpoint } = await setup(() => ({ status: 503 }));
    const res = await emu.v1(path, { method: 'PUT', bearer: fx.accessToken });
    expect(res.status).toBe(409);
    expect(res.body.detail).toMatch(/handshake rejected/);
    expect(res.text).not.toContain('whs_');
    await emu.admin.idle();
    await new Promise((resolve) => setTimeout(resolve, 200)); // longer than every retry delay
    expect(integrationEndpoint.requests).toHaveLength(1);
    expect(await listConnected(emu, fx, fx.accessToken)).toEqual([false]);
    expect(emu.context.state.webhooks.size).toBe(0);
    expect(emu.context.state.connections.size).toBe(0);
  });

  it('rejects handshakes with a bad body', async () => {
    const bodies: unknown[] = [
      undefined,
      [],
      { routes: ['vote.create'] },
      { webhook_url: 'http://example.com/hook', routes: ['vote.create'] },
      { webhook_url: 'https://example.com/hook', routes: ['webhook.test'] },
      { webhook_url: 'https://example.com/hook', routes: 'vote.create' },
      { webhook_url: 'https://example.com/hook' },
    ];
    const { emu, fx, path, integrationEndpoint } = await setup((_r, index) => ({ status: 200, json: bodies[index] }));
    for (const body of bodies) {
      const res = await emu.v1(path, { method: 'PUT', bearer: fx.accessToken });
      expect(res.status, JSON.stringify(body)).toBe(409);
      expect(res.body.detail).toMatch(/handshake rejected/);
    }
    expect(integrationEndpoint.requests).toHaveLength(bodies.length);
    expect(await listConnected(emu, fx, fx.accessToken)).toEqual([false]);
    expect(emu.context.state.webhooks.size).toBe(0);
  });

  it('rejects a handshake that does not answer in time', async () => {
    const { emu, fx, path } = await setup(() => 'hang');
    const res = await emu.v1(path, { method: 'PUT', bearer: fx.accessToken });
    expect(res.status).toBe(409);
    expect(await listConnected(emu, fx, fx.accessToken)).toEqual([false]);
  });

  it('answers 409 when already connected, by this or another application', async () => {
    const { emu, fx, path, integrationEndpoint } = await setup();
    expect((await emu.v1(path, { method: 'PUT', bearer: fx.accessToken })).status).toBe(204);
    const again = await emu.v1(path, { method: 'PUT', bearer: fx.accessToken });
    expect(again.status).toBe(409);
    expect(again.body.detail).toMatch(/already connected/);
    expect((await emu.v1(path, { method: 'PUT', bearer: secondApp(emu, fx) })).status).toBe(409);
    expect(integrationEndpoint.requests).toHaveLength(1);
  });

  it('answers 409 without a handshake when the webhook limit is reached', async () => {
    const { emu, fx, path, integrationEndpoint } = await setup();
    for (let i = 0; i < 5; i += 1) {
      const res = await emu.v1(`/projects/${fx.projectId}/webhooks`, { bearer: fx.accessToken, json: { label: `w${i}`, url: 'https://example.com/w' } });
      expect(res.status).toBe(201);
    }
    const res = await emu.v1(path, { method: 'PUT', bearer: fx.accessToken });
    expect(res.status).toBe(409);
    expect(res.body.detail).toMatch(/limit/);
    expect(integrationEndpoint.requests).toHaveLength(0);
  });

  it('404s an unknown integration', async () => {
    const { emu, fx } = await setup();
    const unknown = `/projects/${fx.projectId}/integrations/123456789012345678`;
    expect((await emu.v1(unknown, { method: 'PUT', bearer: fx.accessToken })).status).toBe(404);
    expect((await emu.v1(unknown, { method: 'DELETE', bearer: fx.accessToken })).status).toBe(404);
  });

  it('404s a disconnect by another application, or of an integration that is not connected', async () => {
    const { emu, fx, path, integrationEndpoint } = await setup();
    expect((await emu.v1(path, { method: 'DELETE', bearer: fx.accessToken })).status).toBe(404);
    expect((await emu.v1(path, { method: 'PUT', bearer: fx.accessToken })).status).toBe(204);
    const other = await emu.v1(path, { method: 'DELETE', bearer: secondApp(emu, fx) });
    expect(other.status).toBe(404);
    expect(await listConnected(emu, fx, fx.accessToken)).toEqual([true]);
    await emu.admin.idle();
    expect(integrationEndpoint.requests.map((r) => r.json.type)).toEqual(['integration.create']);
  });

  it('disconnects: 204, a signed integration.delete, and no more vote deliveries to its webhook', async () => {
    const { emu, fx, path, integrationEndpoint, voteEndpoint } = await setup();
    expect((await emu.v1(path, { method: 'PUT', bearer: fx.accessToken })).status).toBe(204);
    const { connection_id: connectionId, webhook_secret: secret } = integrationEndpoint.requests[0]!.json.data;

    const res = await emu.v1(path, { method: 'DELETE', bearer: fx.accessToken });
    expect(res.status).toBe(204);
    const [, deleted] = await integrationEndpoint.waitFor(2);
    expect(JSON.parse(deleted!.rawBody.toString('utf8'))).toEqual({ type: 'integration.delete', data: { connection_id: connectionId } });
    expect(verifySignature(deleted!, secret).valid).toBe(true);
    expect(verifySignature(deleted!, `${secret}x`).valid).toBe(false);

    expect(await listConnected(emu, fx, fx.accessToken)).toEqual([false]);
    expect(emu.context.state.webhooks.size).toBe(0);
    const voter = emu.admin.createUser({ username: 'voter' });
    emu.admin.castVote({ project_id: fx.projectId, user_id: voter.id });
    await emu.admin.idle();
    expect(voteEndpoint.requests).toHaveLength(0);
    expect((await emu.v1(path, { method: 'DELETE', bearer: fx.accessToken })).status).toBe(404);
  });

  it('retries integration.delete on a 5xx', async () => {
    const emu = await startTestEmulator({ settings: SETTINGS });
    const fx = setupBot(emu);
    let deletes = 0;
    const endpoint = await startReceiver((request) => {
      if (request.json?.type === 'integration.create') {
        return { status: 200, json: { webhook_url: 'https://example.com/votes', routes: ['vote.create'] } };
      }
      deletes += 1;
      return { status: deletes === 1 ? 500 : 200 };
    });
    const integration = emu.admin.createIntegration({ name: 'Flaky', url: endpoint.url });
    const path = `/projects/${fx.projectId}/integrations/${integration.id}`;
    expect((await emu.v1(path, { method: 'PUT', bearer: fx.accessToken })).status).toBe(204);
    expect((await emu.v1(path, { method: 'DELETE', bearer: fx.accessToken })).status).toBe(204);
    await emu.admin.idle();
    const record = emu.admin.deliveries(fx.projectId).find((d) => d.type === 'integration.delete')!;
    expect(record.outcome).toBe('delivered');
    expect(record.attempts.map((a) => a.status)).toEqual([500, 200]);
  });

  it('works with an application token; refuses project tokens with 403', async () => {
    const { emu, fx, path } = await setup();
    const { application_token } = emu.admin.rotateApplicationToken(fx.clientId);
    expect(await listConnected(emu, fx, application_token)).toEqual([false]);
    expect((await emu.v1(path, { method: 'PUT', bearer: application_token })).status).toBe(204);
    expect(await listConnected(emu, fx, fx.accessToken)).toEqual([true]);
    // Same application, other credential: the connection is the application's.
    expect((await emu.v1(path, { method: 'DELETE', bearer: fx.accessToken })).status).toBe(204);

    for (const res of [
      await emu.v1(`/projects/${fx.projectId}/integrations`, { bearer: fx.projectToken }),
      await emu.v1('/projects/@me/integrations', { bearer: fx.projectToken }),
      await emu.v1(path, { method: 'PUT', bearer: fx.projectToken }),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body.detail).toMatch(/OAuth access token/);
    }
  });

  it('needs the integration scopes', async () => {
    const emu = await startTestEmulator({ settings: SETTINGS });
    const fx = setupBot(emu, { scopes: ['project.integrations.read'] });
    const integration = emu.admin.createIntegration({ name: 'X', url: 'https://example.com/x' });
    expect((await emu.v1(`/projects/${fx.projectId}/integrations`, { bearer: fx.accessToken })).status).toBe(200);
    const put = await emu.v1(`/projects/${fx.projectId}/integrations/${integration.id}`, { method: 'PUT', bearer: fx.accessToken });
    expect(put.status).toBe(403);
  });
});
