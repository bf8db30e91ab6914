import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createListingAgent, type ListingAgent } from '../../../src/agent/agent.js';
import { createRedisConnection, type RedisConnection } from '../../../src/redis/connection.js';
import { withRotatedSecret } from '../../../src/webhooks/secrets-file.js';
import { readRedisSecrets, updateRedisSecrets } from '../../../src/webhooks/secrets-redis.js';
import { createWebhookSecrets, recordRotatedSecret, secretFilePath, type WebhookSecrets } from '../../../src/webhooks/secrets.js';
import { signDelivery } from '../../../src/contract/signature.js';
import { setupBot, startTestEmulator } from '../../helpers/emulator.js';
import { connectTestRedis, startTestRedis, type TestRedis } from '../../helpers/redis.js';
import { programPath } from '../../setup/provided.js';

/** Without a redis-server (test/setup/ says why and how to get one), every test here is skipped. */
const withoutRedis = !programPath('redis-server');

/*
 * Webhook secrets shared through Redis (`state.redis`): a rotation or an integration secret stored
 * by one agent (or the CLI) is accepted by every agent at once, without a file on each machine.
 */

const PREFIX = 'secrets-test:';
const KEY = `${PREFIX}webhooks:secrets`;
const CONFIGURED = 'whs_configured';
const MINUTE = 60_000;

let redis: TestRedis;
const connections: RedisConnection[] = [];
const secretsMade: WebhookSecrets[] = [];
const agents: ListingAgent[] = [];

beforeAll(async () => {
  redis = await startTestRedis();
});
afterEach(async () => {
  await Promise.all(agents.splice(0).map((agent) => agent.stop()));
  for (const secrets of secretsMade.splice(0)) secrets.close();
  await Promise.all(connections.splice(0).map((connection) => connection.close()));
  await redis.command('FLUSHALL');
});
afterAll(async () => {
  await redis?.close();
});

async function connect(): Promise<RedisConnection> {
  const connection = await connectTestRedis(redis, PREFIX);
  connections.push(connection);
  return connection;
}

/** One agent's secrets on a connection of its own; `clock.at` is its time. */
async function agentSecrets(options: { file?: string; clock?: { at: number } } = {}) {
  const connection = await connect();
  const clock = options.clock ?? { at: Date.now() };
  const warnings: string[] = [];
  const logger = { error() {}, info() {}, debug() {}, warn: (_: unknown, msg: string) => void warnings.push(msg), child: () => logger };
  const secrets = createWebhookSecrets({ configured: [CONFIGURED], redis: connection, ...(options.file ? { file: options.file } : {}), now: () => clock.at, logger });
  secretsMade.push(secrets);
  await secrets.start();
  return { connection, secrets, clock, warnings };
}

const rotate = (connection: RedisConnection, webhookId: string, secret: string, at = Date.now()) =>
  updateRedisSecrets(connection, (content) => withRotatedSecret(content, { webhookId, secret }, at), () => at);

describe.skipIf(withoutRedis)('webhook secrets in Redis', () => {
  it('a rotation stored by one reaches every agent at once, without a refresh; the rotated-out secret ends with its grace period', async () => {
    const clock = { at: Date.now() };
    const [a, b] = [await agentSecrets({ clock }), await agentSecrets({ clock })];
    expect(a.secrets.current()).toEqual([CONFIGURED]);

    await rotate(a.connection, 'webhook-1', 'whs_first', clock.at);
    await vi.waitFor(() => expect(b.secrets.current()).toContain('whs_first'), { timeout: 2_000, interval: 5 });
    await vi.waitFor(() => expect(a.secrets.current()).toContain('whs_first'), { timeout: 2_000, interval: 5 });

    await rotate(b.connection, 'webhook-1', 'whs_second', clock.at);
    await vi.waitFor(() => expect(a.secrets.current()).toEqual([CONFIGURED, 'whs_first', 'whs_second']), { timeout: 2_000, interval: 5 });
    // Ten minutes later the first one is gone, by each agent's own clock, without any read.
    clock.at += 10 * MINUTE + 1;
    expect(a.secrets.current()).toEqual([CONFIGURED, 'whs_second']);
    expect(b.secrets.current()).toEqual([CONFIGURED, 'whs_second']);
  });

  it('an integration secret added by one agent is accepted by the other, and forgotten by both when removed', async () => {
    const [a, b] = [await agentSecrets(), await agentSecrets()];
    await a.secrets.addIntegration('connection-1', 'whs_integration');
    // Accepted by the one that stored it as soon as the call resolves.
    expect(a.secrets.current()).toContain('whs_integration');
    await vi.waitFor(() => expect(b.secrets.current()).toContain('whs_integration'), { timeout: 2_000, interval: 5 });
    await b.secrets.removeIntegration('connection-1');
    expect(b.secrets.current()).not.toContain('whs_integration');
    await vi.waitFor(() => expect(a.secrets.current()).not.toContain('whs_integration'), { timeout: 2_000, interval: 5 });
  });

  it('concurrent changes from several agents all land (compare and set, no lost update)', async () => {
    const [a, b] = [await agentSecrets(), await agentSecrets()];
    await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? a : b).secrets.addIntegration(`connection-${i}`, `whs_integration_${i}`)));
    const stored = await readRedisSecrets(a.connection);
    expect(stored!.secrets.map((entry) => entry.connectionId).sort()).toEqual(Array.from({ length: 20 }, (_, i) => `connection-${i}`).sort());
    await vi.waitFor(() => expect(b.secrets.current()).toHaveLength(21), { timeout: 2_000, interval: 5 });
  });

  it('refresh() after a failed verification reads Redis at most once a second, so forged deliveries cannot drive reads', async () => {
    const { secrets, clock } = await agentSecrets();
    // Written behind the channel's back (an older agent, an operator): only a read finds it.
    const write = (secret: string) => redis.command('SET', KEY, JSON.stringify({ version: 1, secrets: [{ secret, source: 'rotate', webhookId: 'w', addedAt: new Date().toISOString() }] }));
    clock.at += 1_000;
    await write('whs_quiet_1');
    expect(await secrets.refresh()).toBe(true);
    expect(secrets.current()).toContain('whs_quiet_1');
    await write('whs_quiet_2');
    expect(await secrets.refresh()).toBe(false);
    expect(secrets.current()).not.toContain('whs_quiet_2');
    clock.at += 1_000;
    expect(await secrets.refresh()).toBe(true);
    expect(secrets.current()).toContain('whs_quiet_2');
  });

  it('the file is still read beside Redis, and an integration stored in the file before Redis is forgotten there too', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'secrets-redis-'));
    const file = secretFilePath(directory);
    await recordRotatedSecret(file, { webhookId: 'old-machine', secret: 'whs_from_file' });
    const { secrets } = await agentSecrets({ file });
    await secrets.addIntegration('connection-9', 'whs_in_redis');
    expect(secrets.current()).toEqual(expect.arrayContaining([CONFIGURED, 'whs_from_file', 'whs_in_redis']));
    await writeFile(file, JSON.stringify({ version: 1, secrets: [{ secret: 'whs_file_integration', source: 'integration', connectionId: 'connection-8', addedAt: new Date().toISOString() }] }));
    await vi.waitFor(async () => expect(await secrets.refresh().then(() => secrets.current())).toContain('whs_file_integration'), { timeout: 2_000, interval: 20 });
    await secrets.removeIntegration('connection-8');
    expect(secrets.current()).not.toContain('whs_file_integration');
  });

  it('started again after close(), it watches the file and the channel again, once each', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'secrets-redis-'));
    const file = secretFilePath(directory);
    const { secrets, connection } = await agentSecrets({ file });
    secrets.close();
    // Changed while closed: read at the next start.
    await recordRotatedSecret(file, { webhookId: 'w-file', secret: 'whs_file_while_closed' });
    await rotate(connection, 'w-redis', 'whs_redis_while_closed');
    await secrets.start();
    expect(secrets.current()).toEqual(expect.arrayContaining(['whs_file_while_closed', 'whs_redis_while_closed']));
    // Watched again, without a refresh: a rotation announced in Redis and a file rewrite.
    await rotate(connection, 'w-redis', 'whs_redis_after');
    await vi.waitFor(() => expect(secrets.current()).toContain('whs_redis_after'), { timeout: 2_000, interval: 5 });
    await recordRotatedSecret(file, { webhookId: 'w-file', secret: 'whs_file_after' });
    await vi.waitFor(() => expect(secrets.current()).toContain('whs_file_after'), { timeout: 2_000, interval: 5 });
    // One subscription to the channel (not one per start).
    const subscribers = (await connection.client.sendCommand(['PUBSUB', 'NUMSUB', `${PREFIX}webhooks:secrets:changed`])) as unknown[];
    expect(Number(subscribers[1])).toBe(1);
  });

  it('starts with Redis down (the configured secrets work), refuses to store, and loads what Redis holds when it returns', async () => {
    const writer = await connect();
    await rotate(writer, 'webhook-1', 'whs_kept_in_redis');
    await redis.stop();
    const late = createRedisConnection({ url: redis.url, prefix: PREFIX, reconnectDelaysMs: [50] });
    connections.push(late);
    late.start();
    const warnings: string[] = [];
    const logger = { error() {}, info() {}, debug() {}, warn: (_: unknown, msg: string) => void warnings.push(msg), child: () => logger };
    const secrets = createWebhookSecrets({ configured: [CONFIGURED], redis: late, logger });
    secretsMade.push(secrets);
    await secrets.start();
    expect(secrets.current()).toEqual([CONFIGURED]);
    expect(warnings).toEqual(['cannot read the webhook secrets in Redis; keeping the secrets already loaded']);
    await expect(secrets.addIntegration('connection-1', 'whs_new')).rejects.toMatchObject({ code: 'redis_unavailable' });
    // Failed verifications while it is down log nothing more.
    for (let i = 0; i < 3; i += 1) await secrets.refresh();
    expect(warnings).toHaveLength(1);

    await redis.start();
    await vi.waitFor(() => expect(secrets.current()).toContain('whs_kept_in_redis'), { timeout: 5_000, interval: 10 });
  }, 20_000);

  it('a value that is not secrets is named (never shown), kept out, and refuses writes until fixed', async () => {
    await redis.command('SET', KEY, '{"version":1,"secrets":[{"secret":"whs_half"}]}');
    const { secrets, warnings, connection } = await agentSecrets();
    expect(secrets.current()).toEqual([CONFIGURED]);
    expect(warnings).toEqual(['cannot read the webhook secrets in Redis; keeping the secrets already loaded']);
    const error = (await secrets.addIntegration('connection-1', 'whs_new').then(() => undefined, (e: unknown) => e)) as Error;
    expect(error.message).toContain(`the Redis key ${KEY} does not hold webhook secrets (problems at secrets.0.source, secrets.0.addedAt)`);
    expect(error.message).not.toContain('whs_half');
    await redis.command('DEL', KEY);
    await secrets.addIntegration('connection-1', 'whs_new');
    expect((await readRedisSecrets(connection))!.secrets).toHaveLength(1);
  });
});

describe.skipIf(withoutRedis)('agents on state.redis', () => {
  it('an agent accepts a delivery signed with a secret another machine rotated into Redis', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const agent = createListingAgent({
      config: {
        service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 },
        state: { directory: await mkdtemp(join(tmpdir(), 'secrets-agent-')), redis: { url: redis.url, prefix: PREFIX, agentId: 'agent-b' } },
        health: { enabled: false },
        webhooks: { enabled: true, listen: '127.0.0.1:0', secrets: [CONFIGURED] },
      },
    });
    agents.push(agent);
    agent.on('error', () => undefined);
    agent.on('vote', () => undefined);
    await agent.start();
    await vi.waitFor(() => expect(agent.webhookReceiverUrl).toBeDefined(), { timeout: 10_000, interval: 20 });
    const deliver = (secret: string, id: string) => {
      const body = JSON.stringify({
        type: 'vote.create',
        data: {
          id: `150000000000000000${id.slice(1)}`,
          weight: 1,
          created_at: new Date(Date.now() - 1_000).toISOString(),
          expires_at: new Date(Date.now() + 12 * 60 * MINUTE).toISOString(),
          project: { id: fx.projectId, type: 'bot', platform: 'discord', platform_id: fx.platformId },
          user: { id: `20000000000000000${id.slice(1)}`, platform_id: '200000000000000002', name: 'voter', avatar_url: null },
        },
      });
      return fetch(agent.webhookReceiverUrl!, { method: 'POST', body, headers: { 'content-type': 'application/json', ...signDelivery({ secret, rawBody: body, timestampSeconds: Math.floor(Date.now() / 1000) }) } }).then((r) => r.status);
    };
    expect(await deliver('whs_rotated_elsewhere', 'v1')).toBe(401);
    await rotate(await connect(), 'webhook-1', 'whs_rotated_elsewhere');
    await vi.waitFor(async () => expect(await deliver('whs_rotated_elsewhere', 'v2')).toBe(204), { timeout: 3_000, interval: 20 });
  }, 20_000);
});
