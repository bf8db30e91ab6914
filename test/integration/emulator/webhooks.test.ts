import { describe, expect, it } from 'vitest';
import { SCOPES } from '../../../src/contract/limits.js';
import { setupBot, startTestEmulator, type BotFixture, type TestEmulator } from '../../helpers/emulator.js';
import { verifySignature } from '../../helpers/verify-signature.js';
import { startReceiver } from '../../helpers/receiver.js';

const SETTINGS = { allowHttpLoopback: true, deliveryRetryDelaysMs: [20, 40, 80], deliveryTimeoutMs: 300 };


async function setup(settings: Partial<typeof SETTINGS> = SETTINGS): Promise<{ emu: TestEmulator; fx: BotFixture }> {
  const emu = await startTestEmulator({ settings });
  return { emu, fx: setupBot(emu) };
}

/** A second application granted on the same project by the same owner. */
function secondApp(emu: TestEmulator, fx: BotFixture): string {
  const app = emu.admin.createApplication({ redirect_uris: ['http://127.0.0.1:1/other'] });
  return emu.admin.grantAuthorization({ client_id: app.client_id, user_id: fx.ownerId, project_id: fx.projectId, scopes: [...SCOPES] })
    .access_token;
}

const hooks = (fx: BotFixture) => `/projects/${fx.projectId}/webhooks`;

describe('v1 webhooks', () => {
  it('creates, lists and deletes a webhook; the secret is only in the create response', async () => {
    const { emu, fx } = await setup();
    const created = await emu.v1(hooks(fx), { bearer: fx.accessToken, json: { label: 'votes', url: 'https://example.com/hook' } });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ id: expect.any(String), label: 'votes', url: 'https://example.com/hook', secret: expect.stringMatching(/^whs_.{16,}$/) });

    const listed = await emu.v1(hooks(fx), { bearer: fx.accessToken });
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual([{ id: created.body.id, label: 'votes', url: 'https://example.com/hook' }]);
    expect(listed.text).not.toContain(created.body.secret);

    const deleted = await emu.v1(`${hooks(fx)}/${created.body.id}`, { method: 'DELETE', bearer: fx.accessToken });
    expect(deleted.status).toBe(204);
    expect((await emu.v1(hooks(fx), { bearer: fx.accessToken })).body).toEqual([]);
    const again = await emu.v1(`${hooks(fx)}/${created.body.id}`, { method: 'DELETE', bearer: fx.accessToken });
    expect(again.status).toBe(404);
    expect(again.headers.get('content-type')).toContain('application/problem+json');
  });

  it('404s a project that is not part of the authorization', async () => {
    const { emu, fx } = await setup();
    const other = emu.admin.createProject({ platform: 'discord', type: 'bot', owner_user_id: fx.ownerId });
    const res = await emu.v1(`/projects/${other.project.id}/webhooks`, { bearer: fx.accessToken });
    expect(res.status).toBe(404);
  });

  it('rotates the secret: later deliveries verify with the new secret and not the old', async () => {
    const { emu, fx } = await setup();
    const receiver = await startReceiver();
    const voter = emu.admin.createUser({ username: 'voter' });
    const created = await emu.v1(hooks(fx), { bearer: fx.accessToken, json: { label: 'r', url: receiver.url } });
    const oldSecret: string = created.body.secret;

    emu.admin.castVote({ project_id: fx.projectId, user_id: voter.id });
    const [first] = await receiver.waitFor(1);
    expect(verifySignature(first!, oldSecret).valid).toBe(true);

    const rotated = await emu.v1(`${hooks(fx)}/${created.body.id}/rotate`, { method: 'POST', bearer: fx.accessToken });
    expect(rotated.status).toBe(200);
    expect(rotated.body).toEqual({ secret: expect.stringMatching(/^whs_/) });
    const newSecret: string = rotated.body.secret;
    expect(newSecret).not.toBe(oldSecret);

    emu.admin.castVote({ project_id: fx.projectId, user_id: voter.id });
    const [, second] = await receiver.waitFor(2);
    expect(second!.json.type).toBe('vote.create');
    expect(verifySignature(second!, newSecret).valid).toBe(true);
    expect(verifySignature(second!, oldSecret).valid).toBe(false);

    const tested = await emu.v1(`${hooks(fx)}/${created.body.id}/test`, { method: 'POST', bearer: fx.accessToken });
    expect(tested.status).toBe(204);
    expect(verifySignature(receiver.requests[2]!, newSecret).valid).toBe(true);
    expect(verifySignature(receiver.requests[2]!, oldSecret).valid).toBe(false);

    const unknown = await emu.v1(`${hooks(fx)}/123456789012345678/rotate`, { method: 'POST', bearer: fx.accessToken });
    expect(unknown.status).toBe(404);
  });

  it('accepts only https URLs without allowHttpLoopback', async () => {
    const { emu, fx } = await setup({});
    const http = await emu.v1(hooks(fx), { bearer: fx.accessToken, json: { label: 'l', url: 'http://127.0.0.1:8080/hook' } });
    expect(http.status).toBe(422);
    expect(http.body.detail).toMatch(/\burl\b/);
    const https = await emu.v1(hooks(fx), { bearer: fx.accessToken, json: { label: 'l', url: 'https://example.com' } });
    expect(https.status).toBe(201);
  });

  it('accepts http on loopback with allowHttpLoopback, but not on other hosts', async () => {
    const { emu, fx } = await setup();
    for (const url of ['http://127.0.0.1:9/a', 'http://localhost:9/b', 'http://[::1]:9/c']) {
      expect((await emu.v1(hooks(fx), { bearer: fx.accessToken, json: { label: 'l', url } })).status, url).toBe(201);
    }
    const remote = await emu.v1(hooks(fx), { bearer: fx.accessToken, json: { label: 'l', url: 'http://example.com/hook' } });
    expect(remote.status).toBe(422);
  });

  it('enforces the label (100) and url (2048) lengths', async () => {
    const { emu, fx } = await setup();
    const post = (json: unknown) => emu.v1(hooks(fx), { bearer: fx.accessToken, json });
    const longUrl = (n: number) => 'https://example.com/' + 'p'.repeat(n - 'https://example.com/'.length);

    expect((await post({ label: 'l'.repeat(100), url: 'https://example.com' })).status).toBe(201);
    const label101 = await post({ label: 'l'.repeat(101), url: 'https://example.com' });
    expect(label101.status).toBe(422);
    expect(label101.body.detail).toMatch(/label/);

    const url2048 = await post({ label: 'u', url: longUrl(2048) });
    expect(url2048.status).toBe(201);
    expect(url2048.body.url).toHaveLength(2048);
    const url2049 = await post({ label: 'u', url: longUrl(2049) });
    expect(url2049.status).toBe(422);
    expect(url2049.body.detail).toMatch(/url/);
  });

  it('answers 422 naming the missing or malformed field', async () => {
    const { emu, fx } = await setup();
    const post = (json: unknown) => emu.v1(hooks(fx), { bearer: fx.accessToken, json });
    const none = await post({});
    expect(none.status).toBe(422);
    expect(none.body.detail).toMatch(/label/);
    expect(none.body.detail).toMatch(/url/);
    const noUrl = await post({ label: 'x' });
    expect(noUrl.status).toBe(422);
    expect(noUrl.body.detail).toMatch(/^url/);
    const noLabel = await post({ url: 'https://example.com' });
    expect(noLabel.status).toBe(422);
    expect(noLabel.body.detail).toMatch(/^label/);
    expect((await post({ label: 5, url: 'https://example.com' })).status).toBe(422);
    expect((await post({ label: 'x', url: 'not a url' })).status).toBe(422);
    expect((await post([{ label: 'x', url: 'https://example.com' }])).status).toBe(422);
    expect((await emu.v1(hooks(fx), { bearer: fx.accessToken })).body).toEqual([]);
  });

  it('allows 5 webhooks per project, then 409', async () => {
    const { emu, fx } = await setup();
    for (let i = 0; i < 5; i += 1) {
      const res = await emu.v1(hooks(fx), { bearer: fx.accessToken, json: { label: `w${i}`, url: `https://example.com/${i}` } });
      expect(res.status).toBe(201);
    }
    const sixth = await emu.v1(hooks(fx), { bearer: fx.accessToken, json: { label: 'w5', url: 'https://example.com/5' } });
    expect(sixth.status).toBe(409);
    expect(sixth.body.detail).toMatch(/limit/);
  });

  it("counts other applications' and integration webhooks toward the limit, without showing them", async () => {
    const { emu, fx } = await setup();
    const relay = await startReceiver(() => ({ status: 200, json: { webhook_url: 'https://example.com/relay', routes: ['vote.create'] } }));
    const integration = emu.admin.createIntegration({ name: 'Relay', url: relay.url });
    const connected = await emu.v1(`/projects/${fx.projectId}/integrations/${integration.id}`, { method: 'PUT', bearer: fx.accessToken });
    expect(connected.status).toBe(204);
    const otherToken = secondApp(emu, fx);
    expect((await emu.v1(hooks(fx), { bearer: otherToken, json: { label: 'other', url: 'https://example.com/o' } })).status).toBe(201);

    for (let i = 0; i < 3; i += 1) {
      expect((await emu.v1(hooks(fx), { bearer: fx.accessToken, json: { label: `w${i}`, url: 'https://example.com/w' } })).status).toBe(201);
    }
    const full = await emu.v1(hooks(fx), { bearer: fx.accessToken, json: { label: 'w3', url: 'https://example.com/w' } });
    expect(full.status).toBe(409);

    const listed = await emu.v1(hooks(fx), { bearer: fx.accessToken });
    expect(listed.body.map((w: { label: string }) => w.label)).toEqual(['w0', 'w1', 'w2']);
    // The integration's webhook is managed through the integration endpoints only.
    const integrationHook = [...emu.context.state.webhooks.values()].find((w) => w.connection_id !== null)!;
    expect((await emu.v1(`${hooks(fx)}/${integrationHook.id}`, { method: 'DELETE', bearer: fx.accessToken })).status).toBe(404);
    expect((await emu.v1(`${hooks(fx)}/${integrationHook.id}/rotate`, { method: 'POST', bearer: fx.accessToken })).status).toBe(404);
  });

  it("keeps applications apart: another app sees none of the first app's webhooks and cannot change them", async () => {
    const { emu, fx } = await setup();
    const receiver = await startReceiver();
    const mine = await emu.v1(hooks(fx), { bearer: fx.accessToken, json: { label: 'mine', url: receiver.url } });
    const otherToken = secondApp(emu, fx);

    expect((await emu.v1(hooks(fx), { bearer: otherToken })).body).toEqual([]);
    const path = `${hooks(fx)}/${mine.body.id}`;
    expect((await emu.v1(path, { method: 'DELETE', bearer: otherToken })).status).toBe(404);
    expect((await emu.v1(`${path}/rotate`, { method: 'POST', bearer: otherToken })).status).toBe(404);
    expect((await emu.v1(`${path}/test`, { method: 'POST', bearer: otherToken })).status).toBe(404);
    expect(receiver.requests).toHaveLength(0);

    const theirs = await emu.v1(hooks(fx), { bearer: otherToken, json: { label: 'theirs', url: 'https://example.com/t' } });
    expect(theirs.status).toBe(201);
    expect((await emu.v1(hooks(fx), { bearer: fx.accessToken })).body).toEqual([{ id: mine.body.id, label: 'mine', url: receiver.url }]);
    expect((await emu.v1(hooks(fx), { bearer: otherToken })).body).toEqual([{ id: theirs.body.id, label: 'theirs', url: 'https://example.com/t' }]);
  });

  it('refuses project tokens and application tokens with 403 (an OAuth access token is required)', async () => {
    const { emu, fx } = await setup();
    const { application_token } = emu.admin.rotateApplicationToken(fx.clientId);
    const body = { label: 'x', url: 'https://example.com' };
    const attempts = [
      await emu.v1(hooks(fx), { bearer: fx.projectToken }),
      await emu.v1('/projects/@me/webhooks', { bearer: fx.projectToken }),
      await emu.v1(hooks(fx), { bearer: fx.projectToken, json: body }),
      await emu.v1(hooks(fx), { bearer: application_token }),
      await emu.v1(hooks(fx), { bearer: application_token, json: body }),
    ];
    for (const res of attempts) {
      expect(res.status).toBe(403);
      expect(res.body.detail).toMatch(/OAuth access token/);
    }
    expect(emu.context.state.webhooks.size).toBe(0);
  });

  it('needs the webhook scopes', async () => {
    const emu = await startTestEmulator({ settings: SETTINGS });
    const fx = setupBot(emu, { scopes: ['project.webhooks.read'] });
    expect((await emu.v1(hooks(fx), { bearer: fx.accessToken })).status).toBe(200);
    const post = await emu.v1(hooks(fx), { bearer: fx.accessToken, json: { label: 'x', url: 'https://example.com' } });
    expect(post.status).toBe(403);
    expect(post.body.detail).toMatch(/project\.webhooks\.write/);
  });
});

describe('v1 webhook test event', () => {
  it('sends a signed webhook.test and answers 204 when the destination answers 2xx', async () => {
    const { emu, fx } = await setup();
    const receiver = await startReceiver(() => ({ status: 202 }));
    const created = await emu.v1(hooks(fx), { bearer: fx.accessToken, json: { label: 't', url: receiver.url } });
    const res = await emu.v1(`${hooks(fx)}/${created.body.id}/test`, { method: 'POST', bearer: fx.accessToken });
    expect(res.status).toBe(204);
    expect(receiver.requests).toHaveLength(1);
    const [request] = receiver.requests;
    expect(request!.method).toBe('POST');
    expect(verifySignature(request!, created.body.secret).valid).toBe(true);
    expect(verifySignature(request!, 'whs_wrong').valid).toBe(false);
    expect(request!.headers['x-topgg-trace']).toEqual(expect.any(String));
    expect(JSON.parse(request!.rawBody.toString('utf8'))).toEqual({
      type: 'webhook.test',
      data: {
        project: { id: fx.projectId, type: 'bot', platform: 'discord', platform_id: fx.platformId },
        user: { id: fx.ownerId, platform_id: fx.ownerPlatformId, name: 'owner', avatar_url: null },
      },
    });
  });

  it('answers 409 when the destination answers 500, after exactly one try', async () => {
    const { emu, fx } = await setup();
    const receiver = await startReceiver(() => ({ status: 500 }));
    const created = await emu.v1(hooks(fx), { bearer: fx.accessToken, json: { label: 't', url: receiver.url } });
    const res = await emu.v1(`${hooks(fx)}/${created.body.id}/test`, { method: 'POST', bearer: fx.accessToken });
    expect(res.status).toBe(409);
    expect(res.body.detail).toMatch(/500/);
    expect(res.text).not.toContain(created.body.secret);
    await emu.admin.idle();
    await new Promise((resolve) => setTimeout(resolve, 200)); // longer than every retry delay
    expect(receiver.requests).toHaveLength(1);
    const [delivery] = emu.admin.deliveries(fx.projectId);
    expect(delivery).toMatchObject({ type: 'webhook.test', outcome: 'failed', attempts: [{ status: 500 }] });
  });

  it('answers 409 when the destination cannot be reached or does not answer in time', async () => {
    const { emu, fx } = await setup();
    const refused = await emu.v1(hooks(fx), { bearer: fx.accessToken, json: { label: 'down', url: 'http://127.0.0.1:1/hook' } });
    expect((await emu.v1(`${hooks(fx)}/${refused.body.id}/test`, { method: 'POST', bearer: fx.accessToken })).status).toBe(409);

    const hanging = await startReceiver(() => 'hang');
    const slow = await emu.v1(hooks(fx), { bearer: fx.accessToken, json: { label: 'slow', url: hanging.url } });
    const res = await emu.v1(`${hooks(fx)}/${slow.body.id}/test`, { method: 'POST', bearer: fx.accessToken });
    expect(res.status).toBe(409);
    expect(res.body.detail).toMatch(/300 ms/);
    expect(hanging.requests).toHaveLength(1);
  });

  it('404s an unknown webhook', async () => {
    const { emu, fx } = await setup();
    const res = await emu.v1(`${hooks(fx)}/123456789012345678/test`, { method: 'POST', bearer: fx.accessToken });
    expect(res.status).toBe(404);
  });
});
