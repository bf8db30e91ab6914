import { mkdtemp, readFile, stat } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { createListingAgent, type ListingAgent } from '../../../src/agent/agent.js';
import { createAgentMetrics } from '../../../src/runtime/metrics.js';
import { createManualScheduler } from '../../helpers/manual-scheduler.js';
import { createMemoryStore } from '../../../src/store/memory.js';
import { createVotesCapability } from '../../../src/votes/capability.js';
import { createMemoryVoteLedger } from '../../../src/votes/ledger-memory.js';
import { createVotePipeline, type VotePipeline } from '../../../src/votes/pipeline.js';
import type { Vote, VoteHook } from '../../../src/votes/types.js';
import { createWebhooksCapability } from '../../../src/webhooks/capability.js';
import { createWebhookReceiver, type WebhookReceiverOptions } from '../../../src/webhooks/receiver.js';
import { createWebhookSecrets, recordRotatedSecret, secretFilePath } from '../../../src/webhooks/secrets.js';
import { signDelivery } from '../../../src/contract/signature.js';
import { clientFor } from '../../helpers/client.js';
import { setupBot, startTestEmulator } from '../../helpers/emulator.js';

const SECRET = 'whs_configured_secret';
const LEGACY = 'legacy-shared-secret';
const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step().catch(() => undefined);
});

const until = async (check: () => boolean, timeoutMs = 5_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};

/** A pipeline whose one hook records each vote, a receiver on 127.0.0.1:0 in front of it. */
/** `ingestDelayMs` holds the first ingest only; `failIngests` rejects the first ones. */
async function setup(options: Partial<WebhookReceiverOptions> & { failIngests?: number; ingestDelayMs?: number; hookHangs?: boolean } = {}) {
  const fired: Vote[] = [];
  const hook: VoteHook = {
    name: 'record',
    retries: 0,
    run: async (vote) => {
      fired.push(vote);
      if (options.hookHangs) await new Promise(() => undefined);
    },
  };
  const pipeline = createVotePipeline({ ledger: createMemoryVoteLedger(), hooks: [hook], logger: silent, now: Date.now });
  await pipeline.start();
  cleanup.push(() => pipeline.stop(Date.now()));
  let failures = options.failIngests ?? 0;
  let delays = 1;
  const ingest: VotePipeline['ingest'] = async (votes, road) => {
    if (failures-- > 0) throw new Error('ENOSPC: disk full');
    if (options.ingestDelayMs && delays-- > 0) await new Promise((resolve) => setTimeout(resolve, options.ingestDelayMs));
    return pipeline.ingest(votes, road);
  };
  const directory = await mkdtemp(join(tmpdir(), 'receiver-'));
  const file = secretFilePath(directory);
  const secrets = createWebhookSecrets({ configured: [SECRET], file });
  await secrets.start();
  cleanup.push(async () => secrets.close());
  const registry = new Registry();
  const metrics = createAgentMetrics(registry);
  const receiver = createWebhookReceiver({ listen: { host: '127.0.0.1', port: 0 }, secrets, legacyAuthorization: LEGACY, pipeline: { ingest }, projectId: () => PROJECT.id, metrics, ...options });
  const url = await receiver.start();
  cleanup.push(() => receiver.stop());
  const outcomes = async () => {
    const text = await registry.metrics();
    return Object.fromEntries([...text.matchAll(/webhook_deliveries_total\{outcome="(\w+)"\} (\d+)/g)].map((m) => [m[1], Number(m[2])]).filter(([, n]) => n !== 0));
  };
  return { url, fired, pipeline, file, outcomes, receiver, port: Number(new URL(url).port) };
}

const silent = { error() {}, warn() {}, info() {}, debug() {}, child: () => silent };
/** The receiver's project (its service ID, and its platform ID: the bot's). */
const PROJECT = { id: '1100000000000000001', type: 'bot', platform: 'discord', platform_id: '100000000000000001' };
let voteSeq = 0;
/** A Snowflake-shaped ID numbered `n` under `base`. */
const snowflake = (base: bigint, n: number) => String(base + BigInt(n));
function voteBody(userId = snowflake(1_200_000_000_000_000_000n, ++voteSeq), createdAt = new Date().toISOString(), project = PROJECT) {
  return JSON.stringify({
    type: 'vote.create',
    data: {
      id: snowflake(1_500_000_000_000_000_000n, voteSeq),
      weight: 1,
      created_at: createdAt,
      expires_at: new Date(Date.parse(createdAt) + 43_200_000).toISOString(),
      project,
      user: { id: userId, platform_id: '200000000000000002', name: 'voter', avatar_url: null },
    },
  });
}
const signed = (body: string, secret = SECRET, t = Math.floor(Date.now() / 1000)) => signDelivery({ secret, rawBody: body, timestampSeconds: t });
const post = (url: string, body: string, headers: Record<string, string> = {}) =>
  fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });

/** A raw socket to the receiver, for what fetch will not send. */
function rawSocket(port: number): Promise<Socket & { received(): string; ended: Promise<void> }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    socket.on('data', (chunk) => (text += chunk.toString()));
    const ended = new Promise<void>((done) => socket.on('close', () => done()));
    socket.on('error', () => undefined);
    socket.once('connect', () => resolve(Object.assign(socket, { received: () => text, ended })));
    socket.once('error', reject);
  });
}

describe('the webhook receiver, at the HTTP level', () => {
  it('records a signed vote once: 204, a repeat of the delivery 204 too, one hook call', async () => {
    const { url, fired, pipeline, outcomes } = await setup();
    const createdMs = Math.floor(Date.now() / 1000) * 1000 - 60_000;
    const body = voteBody('1200000000000000999', new Date(createdMs).toISOString());
    const first = await post(url, body, signed(body));
    const again = await post(url, body, signed(body));
    expect([first.status, again.status]).toEqual([204, 204]);
    await pipeline.idle();
    expect(fired).toHaveLength(1);
    expect(fired[0]).toMatchObject({ key: `1200000000000000999:${createdMs}`, road: 'webhook', voteId: expect.any(String), projectId: PROJECT.id, platformId: '200000000000000002', user: { name: 'voter', avatarUrl: null } });
    expect(await outcomes()).toEqual({ accepted: 1, duplicate: 1 });
  });

  it('answers 503 when the vote cannot be recorded, and never 2xx for it', async () => {
    const { url, fired, pipeline, outcomes } = await setup({ failIngests: 1 });
    const body = voteBody();
    const failed = await post(url, body, signed(body));
    expect(failed.status).toBe(503);
    const retried = await post(url, body, signed(body));
    expect(retried.status).toBe(204);
    await pipeline.idle();
    expect(fired).toHaveLength(1);
    expect(await outcomes()).toEqual({ error: 1, accepted: 1 });
  });

  it('answers at once whatever the hooks do, 503 when recording outlasts the deadline, and lets a request in flight finish on stop', async () => {
    const hanging = await setup({ hookHangs: true });
    const body = voteBody();
    const started = Date.now();
    expect((await post(hanging.url, body, signed(body))).status).toBe(204);
    expect(Date.now() - started).toBeLessThan(1_000);
    await until(() => hanging.fired.length === 1);

    const slow = await setup({ ingestDelayMs: 400, answerWithinMs: 100 });
    expect((await post(slow.url, body, signed(body))).status).toBe(503);
    // The record landed after the 503: the service's retry is a duplicate, answered 204.
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect((await post(slow.url, body, signed(body))).status).toBe(204);
    expect(await slow.outcomes()).toEqual({ error: 1, duplicate: 1 });

    const stopping = await setup({ ingestDelayMs: 300 });
    const other = voteBody();
    const inFlight = post(stopping.url, other, signed(other));
    await new Promise((resolve) => setTimeout(resolve, 100));
    await stopping.receiver.stop({ deadline: Date.now() + 2_000 });
    expect((await inFlight).status).toBe(204);
    await expect(post(stopping.url, other, signed(other))).rejects.toThrow();
    await stopping.pipeline.idle();
    expect(stopping.fired).toHaveLength(1);
  });

  it('drops a rotated-out secret after its grace period', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'secrets-'));
    let now = Date.parse('2026-03-04T10:00:00Z');
    const file = secretFilePath(directory);
    await recordRotatedSecret(file, { webhookId: 'w1', secret: 'whs_one' }, () => now);
    await recordRotatedSecret(file, { webhookId: 'w1', secret: 'whs_two' }, () => now);
    const secrets = createWebhookSecrets({ configured: [SECRET], file, now: () => now, watch: false });
    await secrets.start();
    expect(secrets.current()).toEqual([SECRET, 'whs_one', 'whs_two']);
    now += 9 * 60_000;
    expect(secrets.current()).toContain('whs_one');
    now += 2 * 60_000;
    expect(secrets.current()).toEqual([SECRET, 'whs_two']);
    // The next write leaves the expired entry out of the file too.
    await recordRotatedSecret(file, { webhookId: 'w2', secret: 'whs_three' }, () => now);
    expect(await readFile(file, 'utf8')).not.toContain('whs_one');
  });

  it('refuses each bad input with the right status, and nothing reaches the hooks', async () => {
    const logs: unknown[] = [];
    const at = (...args: unknown[]) => void logs.push(args);
    const logger = { error: at, warn: at, info: at, debug: at, child: () => logger };
    const { url, fired, pipeline, outcomes } = await setup({ logger });
    const body = voteBody();
    const t = Math.floor(Date.now() / 1000);
    const good = signed(body)['x-topgg-signature']!;
    const hex = good.split('v1=')[1]!;
    const header = (value: string) => ({ 'x-topgg-signature': value });
    const cases: Array<[string, string, Record<string, string>, number]> = [
      ['no header', body, {}, 401],
      ['empty header', body, header(''), 401],
      ['t= only', body, header(`t=${t}`), 401],
      ['v1= only', body, header(`v1=${hex}`), 401],
      ['non-hex', body, header(`t=${t},v1=${'z'.repeat(64)}`), 401],
      ['odd length', body, header(`t=${t},v1=${hex.slice(1)}`), 401],
      ['one byte short', body, header(`t=${t},v1=${hex.slice(2)}`), 401],
      ['one byte long', body, header(`t=${t},v1=${hex}00`), 401],
      ['duplicated keys', body, header(`t=${t},t=${t},v1=${hex}`), 401],
      ['whitespace', body, header(`t=${t}, v1=${hex}`), 401],
      ['a wrong secret', body, signed(body, 'whs_other'), 401],
      ['stale', body, signed(body, SECRET, t - 302), 401],
      ['future', body, signed(body, SECRET, t + 310), 401],
      ['a signature over another body', voteBody(), header(good), 401],
      ['invalid JSON under a valid signature', '{"type":', signed('{"type":'), 400],
      ['an unknown event', '{"type":"vote.delete","data":{}}', signed('{"type":"vote.delete","data":{}}'), 400],
      ['a wrong shape', '{"type":"vote.create","data":{"id":1}}', signed('{"type":"vote.create","data":{"id":1}}'), 400],
      ['a wrong v0 Authorization', '{"bot":"1","user":"2","type":"upvote"}', { authorization: 'nope' }, 401],
    ];
    for (const [what, sent, headers, status] of cases) {
      const response = await post(url, sent, headers);
      expect({ what, status: response.status }).toEqual({ what, status });
    }
    expect((await fetch(url)).status).toBe(405);
    expect((await fetch(url)).headers.get('allow')).toBe('POST');
    expect((await post(`${url}/other`, body, signed(body))).status).toBe(404);
    await pipeline.idle();
    expect(fired).toHaveLength(0);
    expect(await outcomes()).toEqual({ bad_signature: 13, stale: 2, malformed: 3, rejected: 3 });
    // Logged (once per reason), never with a secret or a signature.
    const logged = JSON.stringify(logs);
    expect(logged).toContain('bad_signature');
    for (const secret of [SECRET, LEGACY, hex, 'nope']) expect(logged).not.toContain(secret);
  });

  it('refuses a 10 MB body with 413 without reading it all, declared or streamed', async () => {
    const { port, fired, outcomes } = await setup();
    for (const declared of [true, false]) {
      const socket = await rawSocket(port);
      const framing = declared ? `content-length: ${10 * 1024 * 1024}` : 'transfer-encoding: chunked';
      socket.write(`POST /webhooks/listing HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n${framing}\r\n\r\n`);
      const chunk = Buffer.alloc(64 * 1024, 'a');
      let written = 0;
      while (written < 10 * 1024 * 1024 && !socket.destroyed && socket.writable) {
        const ok = socket.write(declared ? chunk : Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]));
        written += chunk.length;
        if (!ok) await Promise.race([new Promise((resolve) => socket.once('drain', resolve)), socket.ended]);
      }
      await socket.ended;
      expect(socket.received()).toMatch(/^HTTP\/1\.1 413/);
      expect(written).toBeLessThan(10 * 1024 * 1024);
    }
    expect(fired).toHaveLength(0);
    expect(await outcomes()).toEqual({ too_large: 2 });
  });

  it('cuts off a body trickled one byte a second', async () => {
    const { port, fired } = await setup({ timeouts: { requestMs: 1_000, checkEveryMs: 100 } });
    const socket = await rawSocket(port);
    const body = voteBody();
    socket.write(`POST /webhooks/listing HTTP/1.1\r\nhost: x\r\ncontent-length: ${body.length}\r\n\r\n`);
    let sent = 0;
    const trickle = setInterval(() => socket.writable && socket.write(body[sent++]!), 1_000);
    const started = Date.now();
    await socket.ended;
    clearInterval(trickle);
    expect(Date.now() - started).toBeLessThan(4_000);
    expect(sent).toBeLessThan(5);
    expect(fired).toHaveLength(0);
  });

  it('stays up under a flood of 500 connections, with memory flat, and still answers afterwards', async () => {
    const { url, port, fired, pipeline } = await setup({ maxConnections: 64, timeouts: { headersMs: 1_000, requestMs: 1_000, checkEveryMs: 100 } });
    const flood = async () => {
      const sockets = await Promise.all(Array.from({ length: 500 }, () => rawSocket(port).catch(() => undefined)));
      for (const socket of sockets) socket?.write('POST /webhooks/listing HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\n{');
      await Promise.all(sockets.map((socket) => socket?.ended));
    };
    await flood();
    global.gc?.();
    const before = process.memoryUsage().heapUsed;
    await flood();
    await flood();
    global.gc?.();
    const after = process.memoryUsage().heapUsed;
    expect(after - before).toBeLessThan(20 * 1024 * 1024);
    const body = voteBody();
    expect((await post(url, body, signed(body))).status).toBe(204);
    await pipeline.idle();
    expect(fired).toHaveLength(1);
  });

  it('takes an integration handshake signed with an accepted secret, then votes signed with its new secret, until deleted', async () => {
    const { url, fired, pipeline, file } = await setup({ publicUrl: 'https://bot.example/webhooks/listing' });
    const connection = { connection_id: 'conn-1', webhook_secret: 'whs_from_handshake' };
    const party = { project: PROJECT, user: { id: 'u', platform_id: '2', name: 'owner' } };
    const create = JSON.stringify({ type: 'integration.create', data: { ...connection, ...party } });
    const answer = await post(url, create, signed(create));
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ webhook_url: 'https://bot.example/webhooks/listing', routes: ['vote.create'] });
    expect(await readFile(file, 'utf8')).toContain('whs_from_handshake');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const vote = voteBody();
    expect((await post(url, vote, signed(vote, 'whs_from_handshake'))).status).toBe(204);
    const remove = JSON.stringify({ type: 'integration.delete', data: { connection_id: 'conn-1' } });
    expect((await post(url, remove, signed(remove, 'whs_from_handshake'))).status).toBe(204);
    const later = voteBody();
    expect((await post(url, later, signed(later, 'whs_from_handshake'))).status).toBe(401);
    const selfSigned = JSON.stringify({ type: 'integration.create', data: { connection_id: 'conn-2', webhook_secret: 'whs_mine', ...party } });
    expect((await post(url, selfSigned, signed(selfSigned, 'whs_mine'))).status).toBe(401);
    await pipeline.idle();
    expect(fired).toHaveLength(1);
  });

  it('records a v0 upvote once across its retries, and answers its test', async () => {
    const { url, fired, pipeline } = await setup();
    const body = JSON.stringify({ bot: '100000000000000001', user: '200000000000000002', type: 'upvote', isWeekend: true, query: '?a=1' });
    for (let i = 0; i < 4; i += 1) expect((await post(url, body, { authorization: LEGACY })).status).toBe(204);
    expect((await post(url, JSON.stringify({ bot: '1', user: '2', type: 'test' }), { authorization: LEGACY })).status).toBe(204);
    await pipeline.idle();
    expect(fired).toHaveLength(1);
    expect(fired[0]).toMatchObject({ key: expect.stringMatching(new RegExp(`^v0:${PROJECT.id}:200000000000000002:\\d+$`)), weight: 2, platformId: '200000000000000002', road: 'webhook' });
  });

  it('accepts a secret rotated into the secret file without a restart', async () => {
    const { url, fired, pipeline, file } = await setup();
    const body = voteBody();
    expect((await post(url, body, signed(body, 'whs_rotated'))).status).toBe(401);
    await recordRotatedSecret(file, { webhookId: 'w1', secret: 'whs_rotated' });
    expect((await post(url, body, signed(body, 'whs_rotated'))).status).toBe(204);
    // A second rotation: the first stays valid for its grace period.
    await recordRotatedSecret(file, { webhookId: 'w1', secret: 'whs_rotated_again' });
    const next = voteBody();
    expect((await post(url, next, signed(next, 'whs_rotated'))).status).toBe(204);
    await pipeline.idle();
    expect(fired).toHaveLength(2);
  });
});

describe('the webhook receiver, against the emulator', () => {
  it('turns real signed deliveries into one hook call per vote, whether it also comes by the poller or is retried after a 503', async () => {
    const emu = await startTestEmulator({ settings: { allowHttpLoopback: true, deliveryRetryDelaysMs: [50, 50, 50] } });
    const fx = setupBot(emu);
    const directory = await mkdtemp(join(tmpdir(), 'receiver-agent-'));
    const fired: Vote[] = [];
    let failNext = 0;
    const hook: VoteHook = { name: 'record', retries: 0, run: async (vote) => void fired.push(vote) };
    const votes = createVotesCapability({ ledger: 'memory', hooks: [hook], schedules: createManualScheduler().factory });
    const webhooks = createWebhooksCapability({
      sharedPipeline: () => {
        const pipeline = votes.pipeline!;
        return { ...pipeline, ingest: (batch, road) => (failNext-- > 0 ? Promise.reject(new Error('disk full')) : pipeline.ingest(batch, road)) };
      },
    });
    const agent: ListingAgent = createListingAgent({
      config: {
        service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 },
        health: { enabled: false },
        state: { directory },
        votes: { enabled: true },
        webhooks: { enabled: true, listen: '127.0.0.1:0', secrets: ['whs_placeholder'] },
      },
      store: createMemoryStore(),
      capabilities: [votes, webhooks],
    });
    await agent.start();
    cleanup.push(() => agent.stop());
    expect(agent.readiness.snapshot().components.webhooks).toMatchObject({ ready: true, detail: `listening at ${webhooks.url}` });

    // The webhook's secret exists once it is made: written to the secret file, as `webhooks rotate` does.
    const client = clientFor(emu, { accessToken: fx.accessToken, projectId: fx.projectId });
    const created = await client.webhooks.create({ label: 'agent', url: webhooks.url!, allowHttpLoopback: true });
    await recordRotatedSecret(secretFilePath(directory), { webhookId: created.id, secret: created.secret });

    const voter = emu.admin.createUser({ username: 'voter' });
    const cast = emu.admin.castVote({ project_id: fx.projectId, user_id: voter.id });
    await emu.admin.idle();
    await until(() => fired.length === 1);
    expect(fired[0]).toMatchObject({ road: 'webhook', voteId: cast.id, userId: voter.id });
    await votes.pollNow();
    await agent.votePipeline!.idle();
    expect(fired).toHaveLength(1);

    failNext = 1;
    const second = emu.admin.createUser({ username: 'second' });
    emu.admin.castVote({ project_id: fx.projectId, user_id: second.id });
    await emu.admin.idle();
    await until(() => fired.length === 2);
    const delivery = emu.admin.deliveries(fx.projectId).filter((d) => d.type === 'vote.create').at(-1)!;
    expect(delivery.attempts.map((a) => a.status)).toEqual([503, 204]);
    await client.webhooks.test(created.id);
    await votes.pollNow();
    await agent.votePipeline!.idle();
    expect(fired.map((vote) => vote.userId)).toEqual([voter.id, second.id]);
  });

  it('runs a pipeline of its own when votes.enabled is off, with the vote listeners, and files v0 votes under the agent project', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const agent = createListingAgent({
      config: {
        service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 },
        health: { enabled: false },
        state: { directory: await mkdtemp(join(tmpdir(), 'receiver-own-')) },
        webhooks: { enabled: true, listen: '127.0.0.1:0', secrets: [SECRET], legacyAuthorization: LEGACY },
      },
      store: createMemoryStore(),
    });
    const heard: Vote[] = [];
    agent.on('vote', async (vote) => void heard.push(vote));
    await agent.start();
    cleanup.push(() => agent.stop());
    expect(agent.votePipeline).toBeUndefined();
    const url = agent.webhookReceiverUrl!;
    const body = voteBody(undefined, undefined, { id: fx.projectId, type: 'bot', platform: 'discord', platform_id: fx.platformId });
    expect((await post(url, body, signed(body))).status).toBe(204);
    const legacy = JSON.stringify({ bot: fx.platformId, user: '200000000000000009', type: 'upvote' });
    expect((await post(url, legacy, { authorization: LEGACY })).status).toBe(204);
    await until(() => heard.length === 2);
    expect(heard.map((vote) => vote.projectId)).toEqual([fx.projectId, fx.projectId]);
    await agent.stop();
    expect(agent.webhookReceiverUrl).toBeUndefined();
    await expect(post(url, body, signed(body))).rejects.toThrow();
  });

  it("completes the emulator's integration handshake when self-signed handshakes are allowed", async () => {
    const emu = await startTestEmulator({ settings: { allowHttpLoopback: true } });
    const fx = setupBot(emu);
    const { url, fired, pipeline } = await setup({ acceptSelfSignedHandshakes: true, projectId: () => fx.projectId });
    const integration = emu.admin.createIntegration({ name: 'Rewards', url });
    const client = clientFor(emu, { accessToken: fx.accessToken, projectId: fx.projectId });
    await client.integrations.connect(integration.id);
    const voter = emu.admin.createUser({ username: 'voter' });
    emu.admin.castVote({ project_id: fx.projectId, user_id: voter.id });
    await emu.admin.idle();
    await pipeline.idle();
    expect(fired.map((vote) => vote.userId)).toEqual([voter.id]);
    await client.integrations.disconnect(integration.id);
    await emu.admin.idle();
    expect(emu.admin.deliveries(fx.projectId).map((d) => [d.type, d.outcome])).toEqual([
      ['integration.create', 'delivered'],
      ['vote.create', 'delivered'],
      ['integration.delete', 'delivered'],
    ]);
  });
});
