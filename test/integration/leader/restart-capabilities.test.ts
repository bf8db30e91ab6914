import { EventEmitter } from 'node:events';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/agent/agent.js';
import type { AgentCluster } from '../../../src/agent/cluster.js';
import { defaultCapabilities } from '../../../src/agent/default-capabilities.js';
import type { ListingAgentOptions } from '../../../src/agent/options.js';
import type { ListingAgentConfigInput } from '../../../src/config/schema.js';
import { createListingClient } from '../../../src/api/client.js';
import { signDelivery } from '../../../src/contract/signature.js';
import { createHealthServer } from '../../../src/health/server.js';
import { whileLeading, type LeaderOnlyCapability } from '../../../src/leader/gate.js';
import { silentLogger } from '../../../src/log/agent-logger.js';
import type { RedisConnection } from '../../../src/redis/connection.js';
import type { Capability, CapabilityContext, ServiceProject } from '../../../src/runtime/capability.js';
import type { Leadership, LeadershipEvents } from '../../../src/runtime/leadership.js';
import { createAgentMetrics } from '../../../src/runtime/metrics.js';
import { createReadiness, type Readiness } from '../../../src/runtime/readiness.js';
import type { StatsCapability } from '../../../src/stats/capability.js';
import { createShardReporterCapability } from '../../../src/stats/shard-reporter-capability.js';
import { createMemoryStore } from '../../../src/store/memory.js';
import { createRedisStore } from '../../../src/store/redis.js';
import type { StateStore } from '../../../src/store/types.js';
import { voteKey, type VoteHook } from '../../../src/votes/types.js';
import type { WebhooksCapability } from '../../../src/webhooks/capability.js';
import { setupBot, startTestEmulator, type BotFixture, type TestEmulator } from '../../helpers/emulator.js';
import { startFakeDiscordRest } from '../../helpers/fake-discord/index.js';
import { call } from '../../helpers/http.js';
import { connectTestRedis, startTestRedis, type TestRedis } from '../../helpers/redis.js';
import { programPath } from '../../setup/provided.js';
import { freePort, tempDir, waitFor } from '../agent/redis-fixture.js';

/**
 * Every capability the agent builds goes through start, stop, start, stop under `whileLeading`,
 * as on an agent that loses the leader lease and takes it back (issue 23: the push endpoint
 * refused its second start, so stats never posted again). Each must work after its second start:
 * stats posts to the emulator, the push endpoint takes a push, commands sync, the votes poller
 * polls and the pipeline fires the hooks, the receiver answers a signed delivery, the shard
 * reporter writes to Redis, health serves `/readyz`.
 */

type FakeLeadership = Leadership & { lead(): void; standBy(): void };

/** A leadership the test moves by hand (one per gate: each toggled in the agent's order). */
function fakeLeadership(): FakeLeadership {
  let leading = false;
  const emitter = new EventEmitter<LeadershipEvents>();
  return Object.defineProperties(emitter, {
    agentId: { value: 'me' },
    isLeader: { get: () => leading },
    fencingToken: { get: () => (leading ? 1 : undefined) },
    leaderId: { get: () => (leading ? 'me' : 'other') },
    lead: { value: () => ((leading = true), emitter.emit('leader', 'me'), emitter.emit('change', true)) },
    standBy: { value: () => ((leading = false), emitter.emit('leader', 'other'), emitter.emit('change', false)) },
  }) as never;
}

interface Gated {
  gate: LeaderOnlyCapability;
  leadership: FakeLeadership;
  readiness: Readiness;
}

/** What a capability gets from the agent, with its own readiness (two stats capabilities would share a component). */
function contextFor(config: ReturnType<typeof parseConfig>, project: ServiceProject, store: StateStore, hooks: VoteHook[]): CapabilityContext {
  const readiness = createReadiness(Date.now);
  return {
    config,
    project,
    client: createListingClient({ projectToken: config.service.token, v1BaseUrl: config.service.v1, v0BaseUrl: config.service.v0 }),
    store,
    logger: silentLogger,
    metrics: createAgentMetrics(new Registry(), readiness),
    readiness,
    now: Date.now,
    reportError: () => undefined,
    emit: () => undefined,
    listeners: () => hooks as never,
  };
}

/** Gates `capability` on a leadership of its own (the agent's own gate when `given`), and starts the gate standing by. */
async function gated(capability: Capability, context: CapabilityContext, given?: FakeLeadership): Promise<Gated> {
  const leadership = given ?? fakeLeadership();
  const gate = 'inner' in capability ? (capability as LeaderOnlyCapability) : whileLeading(capability, leadership, { retryStartMs: 50, stopDeadlineMs: 2_000 });
  await gate.start(context);
  return { gate, leadership, readiness: context.readiness };
}

/** Leads, in order (what needs the pipeline after the pipeline), each once its inner capability runs. */
async function leadAll(all: Gated[]): Promise<void> {
  for (const g of all) {
    if (!g.leadership.isLeader) g.leadership.lead();
    await waitFor(`${g.gate.name} leading`, () => g.gate.active, 5_000, 5);
  }
}

/** Stands by, in reverse order, each once its inner capability stopped (its component reads standing by again). */
async function standByAll(all: Gated[]): Promise<void> {
  for (const g of [...all].reverse()) {
    if (g.leadership.isLeader) g.leadership.standBy();
    await waitFor(`${g.gate.name} standing by`, () => !g.gate.active && (g.readiness.snapshot().components[g.gate.name]?.detail ?? '').startsWith('standing by'), 5_000, 5);
  }
}

/** A hook that records the keys it fired. */
function recordingHook(): VoteHook & { keys: string[] } {
  const keys: string[] = [];
  return { name: 'record', retries: 3, keys, run: async (vote) => void keys.push(vote.key) };
}

/** The Snowflake of the voter who votes by webhook in round `round`. */
const webhookVoter = (round: number) => String(600_000_000_000_000_000n + BigInt(round));

/** A signed `vote.create` delivery to `url`; resolves with the status. */
async function deliver(url: string, secret: string, fx: BotFixture, userId: string): Promise<number> {
  const createdAt = new Date().toISOString();
  const body = JSON.stringify({
    type: 'vote.create',
    data: {
      id: `1${userId}`,
      weight: 1,
      created_at: createdAt,
      expires_at: new Date(Date.parse(createdAt) + 43_200_000).toISOString(),
      project: { id: fx.projectId, type: 'bot', platform: 'discord', platform_id: fx.platformId },
      user: { id: userId, platform_id: '200000000000000002', name: 'voter', avatar_url: null },
    },
  });
  const res = await fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json', ...signDelivery({ secret, rawBody: body, timestampSeconds: Math.floor(Date.now() / 1000) }) } });
  await res.arrayBuffer();
  return res.status;
}

const serverCounts = (emu: TestEmulator, fx: BotFixture) => emu.admin.metrics(fx.projectId).map((m) => m.metrics.server_count);

async function setup() {
  const emu = await startTestEmulator({ settings: { v1RequestsPerSecond: 10_000, v1ProjectWritesPerMinute: 10_000 } });
  const fx = setupBot(emu);
  const project = await createListingClient({ projectToken: fx.projectToken, v1BaseUrl: emu.urls.v1 }).projects.get();
  const dir = await tempDir('la-restart-caps-');
  const hook = recordingHook();
  const base = (more: Partial<ListingAgentConfigInput>): ListingAgentConfigInput => ({
    service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 },
    state: { directory: dir },
    ...more,
  });
  return { emu, fx, project, dir, hook, base };
}

const SECRET = 'whs_restart_test_secret_0123456789abcdef';
const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const undo of cleanup.splice(0).reverse()) await undo().catch(() => undefined);
});

describe('every capability through start, stop, start, stop under whileLeading', () => {
  it('one agent: push stats, commands, the votes cursor and pipeline, the webhook receiver, health', { timeout: 30_000 }, async () => {
    const { emu, fx, project, dir, hook, base } = await setup();
    const [pushPort, webhookPort] = [await freePort(), await freePort()];
    const commandsFile = join(dir, 'commands.json');
    const config = parseConfig(
      base({
        stats: { enabled: true, source: 'push', push: { listen: `127.0.0.1:${pushPort}`, key: 'push-key-0123456789' } },
        commands: { enabled: true, source: 'file', file: commandsFile },
        votes: { enabled: true, pollInterval: '1h', lookback: '1h' },
        webhooks: { enabled: true, listen: `127.0.0.1:${webhookPort}`, secrets: [SECRET] },
      }),
    );
    const options: ListingAgentOptions = { votes: { hooks: [hook] } };
    const [stats, commands, votes, webhooks] = defaultCapabilities(config, options, undefined);
    expect([stats, commands, votes, webhooks].map((c) => c?.name)).toEqual(['stats', 'commands', 'votes', 'webhooks']);
    // What needs the pipeline after the votes capability, as the agent starts them.
    const all: Gated[] = [];
    for (const capability of [votes!, webhooks!, stats!, commands!]) all.push(await gated(capability, contextFor(config, project, createMemoryStore(), [])));
    cleanup.push(() => Promise.all(all.map((g) => g.gate.stop(Date.now() + 2_000))));
    const readiness = createReadiness(Date.now);
    readiness.set('probe', true, 'up');
    const health = createHealthServer({ listen: { host: '127.0.0.1', port: 0 }, readiness, registry: new Registry(), logger: silentLogger });
    cleanup.push(() => health.stop());
    const voter = emu.admin.createUser({ username: 'voter' });

    for (let round = 1; round <= 2; round += 1) {
      await writeFile(commandsFile, JSON.stringify([{ name: `ping${round}`, description: `Round ${round}` }]));
      const cast = emu.admin.castVote({ project_id: fx.projectId, user_id: voter.id, created_at: new Date(Date.now() - 60_000 + round).toISOString() });
      await leadAll(all);

      // The push endpoint takes a push, and the poster posts it (at once in round 1, the first
      // counts; in round 2 the counts kept from round 1 were posted already, so on demand).
      const pushed = await call(`http://127.0.0.1:${pushPort}/stats`, { bearer: 'push-key-0123456789', json: { shard_id: 0, shard_count: 1, server_count: 100 + round } });
      expect(pushed.status).toBe(204);
      await (stats as StatsCapability).postNow();
      await waitFor(`round ${round}: a post of ${100 + round}`, () => serverCounts(emu, fx).includes(100 + round), 5_000);
      // Commands: the file's set of this round is on the listing.
      await waitFor(`round ${round}: commands synced`, () => JSON.stringify(emu.admin.commands(fx.projectId)).includes(`ping${round}`), 5_000);
      // Votes: the cursor's first poll of this start found the cast vote, and the pipeline fired it.
      await waitFor(`round ${round}: the cursor vote fired`, () => hook.keys.includes(voteKey(cast.user_id, cast.created_at)), 5_000);
      // The receiver answers a signed delivery, and the pipeline fires its hook.
      const before = hook.keys.length;
      expect(await deliver(`http://127.0.0.1:${webhookPort}/webhooks/listing`, SECRET, fx, webhookVoter(round))).toBe(204);
      await waitFor(`round ${round}: the webhook vote fired`, () => hook.keys.length > before, 5_000);
      expect((webhooks as WebhooksCapability).url).toBe(`http://127.0.0.1:${webhookPort}/webhooks/listing`);
      // Health.
      const url = await health.start();
      expect((await call(`${url}/readyz`)).status).toBe(200);

      await standByAll(all);
      await health.stop();
      await expect(fetch(`http://127.0.0.1:${pushPort}/stats`)).rejects.toThrow();
      await expect(fetch(`http://127.0.0.1:${webhookPort}/webhooks/listing`)).rejects.toThrow();
    }
    // Each vote once: two from the cursor, two by webhook.
    expect(new Set(hook.keys).size).toBe(hook.keys.length);
    expect(hook.keys).toHaveLength(4);
  });

  it('stats from Discord REST and from a count source of your own post again after the second start', { timeout: 20_000 }, async () => {
    const { emu, fx, project, base } = await setup();
    const discord = await startFakeDiscordRest({ approximateGuildCount: 50 });
    const rest = parseConfig(base({ stats: { enabled: true, source: 'discord-rest' }, discord: { token: discord.state.token, apiBaseUrl: discord.url } }));
    const guilds = { size: 70 };
    const embedded = parseConfig(base({ stats: { enabled: true, source: 'embedded' } }));
    const sources = [
      defaultCapabilities(rest, {}, undefined)[0]!,
      defaultCapabilities(embedded, { countSource: { description: 'your own counts', read: async () => ({ ready: true, serverCount: guilds.size, shardCount: 1 }) } }, undefined)[0]!,
    ];
    const all: Gated[] = [];
    for (const capability of sources) all.push(await gated(capability, contextFor(rest, project, createMemoryStore(), [])));
    cleanup.push(() => Promise.all(all.map((g) => g.gate.stop(Date.now() + 2_000))));
    for (let round = 1; round <= 2; round += 1) {
      const posts = emu.admin.metrics(fx.projectId).length;
      await leadAll(all);
      for (const g of all) await (g.gate.inner as StatsCapability).postNow();
      // Each capability posted once more (its counts are unchanged in round 2: a post on demand still goes out).
      await waitFor(`round ${round}: both posted`, () => emu.admin.metrics(fx.projectId).length >= posts + 2, 5_000);
      await standByAll(all);
    }
    expect(serverCounts(emu, fx)).toEqual(expect.arrayContaining([50, 70]));
  });
});

describe.skipIf(!programPath('redis-server'))('every capability on Redis through start, stop, start, stop', () => {
  let redis: TestRedis;
  let connection: RedisConnection;
  beforeAll(async () => {
    redis = await startTestRedis();
    connection = await connectTestRedis(redis, 'restart-caps:');
  });
  afterAll(async () => {
    await connection?.close();
    await redis?.close();
  });

  it('summed shard stats, the shard reporter, commands, the Redis ledger and poller, Redis-shared secrets', { timeout: 30_000 }, async () => {
    const { emu, fx, project, dir, hook, base } = await setup();
    const webhookPort = await freePort();
    const config = parseConfig(
      base({
        state: { directory: dir, redis: { url: redis.url, prefix: 'restart-caps:', lease: '2s', agentId: 'me' } },
        stats: { enabled: true, source: 'redis' },
        commands: { enabled: true, source: 'file', file: join(dir, 'commands.json') },
        votes: { enabled: true, pollInterval: '1h', lookback: '1h' },
        webhooks: { enabled: true, listen: `127.0.0.1:${webhookPort}`, secrets: [SECRET] },
      }),
    );
    await writeFile(join(dir, 'commands.json'), JSON.stringify([{ name: 'ping', description: 'Pong' }]));
    // The agent's own gates (stats, commands) and the votes poller follow this leadership.
    const leader = fakeLeadership();
    const cluster = { connection, leadership: leader, agentId: 'me' } as unknown as AgentCluster;
    const [stats, commands, votes, webhooks] = defaultCapabilities(config, { votes: { hooks: [hook] } }, cluster);
    expect('inner' in stats! && 'inner' in commands!).toBe(true);
    const counts = { servers: 0 };
    const reporter = createShardReporterCapability({ source: { description: 'this process', read: async () => ({ ready: true, serverCount: counts.servers, shardCount: 1 }) }, connection, process: 'me' });
    const store = createRedisStore({ connection });
    await store.open();
    const all: Gated[] = [];
    for (const capability of [votes!, webhooks!, reporter]) all.push(await gated(capability, contextFor(config, project, store, [])));
    for (const capability of [stats!, commands!]) all.push(await gated(capability, contextFor(config, project, store, []), leader));
    cleanup.push(() => Promise.all(all.map((g) => g.gate.stop(Date.now() + 2_000))));
    const voter = emu.admin.createUser({ username: 'voter' });

    for (let round = 1; round <= 2; round += 1) {
      counts.servers = 300 + round;
      const cast = emu.admin.castVote({ project_id: fx.projectId, user_id: voter.id, created_at: new Date(Date.now() - 60_000 + round).toISOString() });
      const syncs = emu.admin.requests().filter((r) => r.method === 'PUT' && r.path.endsWith('/commands')).length;
      await leadAll(all);
      // The reporter wrote this round's counts, and the leader's poster summed and posted them.
      await waitFor(`round ${round}: a post of ${300 + round}`, () => serverCounts(emu, fx).includes(300 + round), 5_000);
      await waitFor(`round ${round}: the cursor vote fired`, () => hook.keys.includes(voteKey(cast.user_id, cast.created_at)), 5_000);
      const before = hook.keys.length;
      expect(await deliver(`http://127.0.0.1:${webhookPort}/webhooks/listing`, SECRET, fx, webhookVoter(round))).toBe(204);
      await waitFor(`round ${round}: the webhook vote fired`, () => hook.keys.length > before, 5_000);
      // Commands: synced at the first start; at the second the set is unchanged, and the sync says so.
      if (round === 1) await waitFor('commands synced', () => emu.admin.requests().filter((r) => r.method === 'PUT' && r.path.endsWith('/commands')).length > syncs, 5_000);
      await waitFor(`round ${round}: commands ready`, () => all.find((g) => g.gate.name === 'commands')!.readiness.snapshot().components.commands?.ready === true && !/first sync/.test(all.find((g) => g.gate.name === 'commands')!.readiness.snapshot().components.commands!.detail), 5_000);
      await standByAll(all);
      await expect(fetch(`http://127.0.0.1:${webhookPort}/webhooks/listing`)).rejects.toThrow();
    }
    expect(new Set(hook.keys).size).toBe(hook.keys.length);
    expect(hook.keys).toHaveLength(4);
  });
});
