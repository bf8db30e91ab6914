import { describe, expect, it } from 'vitest';
import { setupBot, startTestEmulator, type BotFixture, type TestEmulator } from '../../helpers/emulator.js';
import { verifySignature } from '../../helpers/verify-signature.js';
import { startReceiver, type ReceivedRequest, type ReceiverAnswer } from '../../helpers/receiver.js';

const SETTINGS = { allowHttpLoopback: true, deliveryRetryDelaysMs: [20, 40, 80], deliveryTimeoutMs: 300 };


/** An emulator with a bot and one webhook pointing at a receiver that answers with `answer`. */
async function withWebhook(answer: (request: ReceivedRequest, index: number) => ReceiverAnswer, options: { now?: () => number } = {}) {
  const emu = await startTestEmulator({ settings: SETTINGS, ...options });
  const fx = setupBot(emu);
  const receiver = await startReceiver(answer);
  const secret = await createWebhook(emu, fx, receiver.url);
  const voter = emu.admin.createUser({ username: 'voter', avatar: 'https://cdn.example.com/v.png' });
  return { emu, fx, receiver, secret, voter };
}

async function createWebhook(emu: TestEmulator, fx: BotFixture, url: string): Promise<string> {
  const res = await emu.v1(`/projects/${fx.projectId}/webhooks`, { bearer: fx.accessToken, json: { label: 'votes', url } });
  expect(res.status).toBe(201);
  return res.body.secret;
}

describe('vote.create deliveries', () => {
  it('delivers a signed vote.create with the vote, a trace header and t from the emulator clock', async () => {
    // A fixed base clock a long way from the wall clock: t must follow the emulator, not Date.now.
    const base = Date.UTC(2031, 2, 4, 10, 0, 0); // a Tuesday: weight 1
    const { emu, fx, receiver, secret, voter } = await withWebhook(() => ({ status: 200 }), { now: () => base });
    emu.admin.advanceClock(90);
    const vote = emu.admin.castVote({ project_id: fx.projectId, user_id: voter.id });

    const [request] = await receiver.waitFor(1);
    expect(request!.method).toBe('POST');
    expect(request!.headers['content-type']).toBe('application/json');
    const signature = verifySignature(request!, secret);
    expect(signature.valid).toBe(true);
    expect(signature.t).toBe(base / 1000 + 90);
    expect(verifySignature(request!, `${secret}x`).valid).toBe(false);
    expect(verifySignature({ ...request!, rawBody: Buffer.concat([request!.rawBody, Buffer.from(' ')]) }, secret).valid).toBe(false);
    expect(request!.headers['x-topgg-trace']).toMatch(/\S/);

    expect(JSON.parse(request!.rawBody.toString('utf8'))).toEqual({
      type: 'vote.create',
      data: {
        id: vote.id,
        weight: 1,
        created_at: new Date(base + 90_000).toISOString(),
        expires_at: new Date(base + 90_000 + 12 * 3600_000).toISOString(),
        project: { id: fx.projectId, type: 'bot', platform: 'discord', platform_id: fx.platformId },
        user: { id: voter.id, platform_id: voter.platform_id, name: 'voter', avatar_url: 'https://cdn.example.com/v.png' },
      },
    });
    await emu.admin.idle();
    const [delivery] = emu.admin.deliveries(fx.projectId);
    expect(delivery).toMatchObject({ type: 'vote.create', outcome: 'delivered', trace_id: request!.headers['x-topgg-trace'] });
    expect(delivery!.attempts).toHaveLength(1);
  });

  it('delivers to every webhook of the project, each signed with its own secret, also for votes cast over HTTP', async () => {
    const { emu, fx, receiver, secret, voter } = await withWebhook(() => ({ status: 200 }));
    const second = await startReceiver();
    const secondSecret = await createWebhook(emu, fx, second.url);
    const other = emu.admin.createProject({ platform: 'discord', type: 'bot', owner_user_id: fx.ownerId });

    emu.admin.castVote({ project_id: other.project.id, user_id: voter.id }); // not this project's
    const cast = await emu.adminCall('/votes', { json: { project_id: fx.projectId, user_id: voter.id } });
    expect(cast.status).toBe(201);
    await emu.admin.idle();

    expect(receiver.requests).toHaveLength(1);
    expect(second.requests).toHaveLength(1);
    expect(receiver.requests[0]!.json.data.id).toBe(cast.body.id);
    expect(verifySignature(receiver.requests[0]!, secret).valid).toBe(true);
    expect(verifySignature(second.requests[0]!, secondSecret).valid).toBe(true);
    expect(verifySignature(second.requests[0]!, secret).valid).toBe(false);
  });

  it('retries a 5xx: 500, 500, 200 is three tries and delivered, all with the same body and trace', async () => {
    const answers = [500, 502, 200];
    const { emu, fx, receiver, secret, voter } = await withWebhook((_r, index) => ({ status: answers[index] ?? 200 }));
    emu.admin.castVote({ project_id: fx.projectId, user_id: voter.id });
    await emu.admin.idle();

    expect(receiver.requests).toHaveLength(3);
    for (const request of receiver.requests) expect(verifySignature(request, secret).valid).toBe(true);
    expect(new Set(receiver.requests.map((r) => r.rawBody.toString('utf8'))).size).toBe(1);
    expect(new Set(receiver.requests.map((r) => r.headers['x-topgg-trace'])).size).toBe(1);
    const [delivery] = emu.admin.deliveries(fx.projectId);
    expect(delivery!.outcome).toBe('delivered');
    expect(delivery!.attempts.map((a) => a.status)).toEqual([500, 502, 200]);
  });

  it('treats a 4xx as final: one try, failed', async () => {
    const { emu, fx, receiver, voter } = await withWebhook(() => ({ status: 410 }));
    emu.admin.castVote({ project_id: fx.projectId, user_id: voter.id });
    await emu.admin.idle();
    await new Promise((resolve) => setTimeout(resolve, 200)); // longer than every retry delay
    expect(receiver.requests).toHaveLength(1);
    const [delivery] = emu.admin.deliveries(fx.projectId);
    expect(delivery!.outcome).toBe('failed');
    expect(delivery!.attempts.map((a) => a.status)).toEqual([410]);
  });

  it('retries a receiver that never answers 3 times (4 tries), then fails', async () => {
    const { emu, fx, receiver, secret, voter } = await withWebhook(() => 'hang');
    emu.admin.castVote({ project_id: fx.projectId, user_id: voter.id });
    await emu.admin.idle();

    expect(receiver.requests).toHaveLength(4);
    for (const request of receiver.requests) expect(verifySignature(request, secret).valid).toBe(true);
    const [delivery] = emu.admin.deliveries(fx.projectId);
    expect(delivery!.outcome).toBe('failed');
    expect(delivery!.attempts).toHaveLength(4);
    for (const attempt of delivery!.attempts) {
      expect(attempt.status).toBeNull();
      expect(attempt.error).toMatch(/300 ms/);
      expect(attempt.duration_ms).toBeGreaterThanOrEqual(250);
    }
  });

  it('retries an unreachable receiver and fails after the last retry', async () => {
    const emu = await startTestEmulator({ settings: SETTINGS });
    const fx = setupBot(emu);
    await createWebhook(emu, fx, 'http://127.0.0.1:1/hook');
    const voter = emu.admin.createUser({ username: 'voter' });
    emu.admin.castVote({ project_id: fx.projectId, user_id: voter.id });
    await emu.admin.idle();
    const [delivery] = emu.admin.deliveries(fx.projectId);
    expect(delivery!.outcome).toBe('failed');
    expect(delivery!.attempts).toHaveLength(4);
  });

  it('stops delivering to a deleted webhook', async () => {
    const { emu, fx, receiver, voter } = await withWebhook(() => ({ status: 200 }));
    const [hook] = (await emu.v1(`/projects/${fx.projectId}/webhooks`, { bearer: fx.accessToken })).body;
    expect((await emu.v1(`/projects/${fx.projectId}/webhooks/${hook.id}`, { method: 'DELETE', bearer: fx.accessToken })).status).toBe(204);
    emu.admin.castVote({ project_id: fx.projectId, user_id: voter.id });
    await emu.admin.idle();
    expect(receiver.requests).toHaveLength(0);
    expect(emu.admin.deliveries(fx.projectId)).toEqual([]);
  });
});
