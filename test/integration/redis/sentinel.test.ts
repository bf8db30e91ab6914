import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createListingAgent, type ListingAgent } from '../../../src/agent/agent.js';
import { parseSentinelNode } from '../../../src/config/schema-redis.js';
import type { CheckResult, DoctorReport } from '../../../src/doctor/types.js';
import { createRedisConnection, RedisServerError } from '../../../src/redis/connection.js';
import type { RedisServer } from '../../../src/redis/server.js';
import { voteKey } from '../../../src/votes/types.js';
import { runCliInProcess } from '../../helpers/cli.js';
import { setupBot, startTestEmulator, type BotFixture, type TestEmulator } from '../../helpers/emulator.js';
import { call } from '../../helpers/http.js';
import { startTestSentinels, type TestSentinels } from '../../helpers/redis-sentinel.js';
import { startVoteHookServer } from '../../helpers/vote-hook-server.js';
import { programPath } from '../../setup/provided.js';
import { freePort, tempDir, waitFor, webhooksFor } from '../agent/redis-fixture.js';

/**
 * Redis as production runs it, with real processes on 127.0.0.1: a primary, its replica and three
 * Sentinels (quorum 2). The connection through Sentinel follows the primary across `SENTINEL
 * FAILOVER`, an agent on it goes on posting pushed stats and recording webhook votes, the doctor
 * reads the topology, and a URL pointed at a Sentinel is refused with the settings to use.
 */

const PUSH_KEY = 'sentinel-push-key-0123456789abcdef';
const ADMIN_TOKEN = 'sentinel-admin-token-0123456789abcdef';
let prefixes = 0;

describe.skipIf(!programPath('redis-server') || !programPath('redis-sentinel'))('Redis through Sentinel', () => {
  let topo: TestSentinels;
  beforeAll(async () => {
    topo = await startTestSentinels();
  }, 60_000);
  afterAll(async () => {
    await topo?.close();
  });

  const sentinel = () => ({ masterName: topo.masterName, nodes: topo.nodes.map((node) => parseSentinelNode(node)!) });

  async function doctorSetup(emu: TestEmulator, fx: BotFixture, redis: Record<string, unknown>) {
    const cwd = await mkdtemp(join(tmpdir(), 'la-doctor-sentinel-'));
    const config = { service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 }, health: { enabled: false }, state: { redis } };
    await writeFile(join(cwd, 'agent.json'), JSON.stringify(config));
    return async () => {
      const res = await runCliInProcess(['doctor', '--config', 'agent.json', '--json'], { cwd, env: {} });
      const report = JSON.parse(res.stdout) as DoctorReport;
      return (name: string) => report.checks.find((check) => check.name === name) as CheckResult;
    };
  }

  it('doctor reads the topology through the Sentinels, one line each, and says what to set', { timeout: 30_000 }, async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const report = await doctorSetup(emu, fx, { sentinel: { masterName: topo.masterName, nodes: topo.nodes }, prefix: `doctor-${(prefixes += 1)}:` });
    await topo.settled();
    const { primary, replica } = await topo.roles();

    const check = await report();
    expect(check('redis.server')).toMatchObject({ status: 'ok', summary: expect.stringMatching(new RegExp(`^redis ${topo.masterName} \\(Sentinels .*\\) answers in \\d+ ms: Redis`)) });
    expect(check('redis.role')).toMatchObject({
      status: 'ok',
      summary: expect.stringMatching(new RegExp(`^primary 127\\.0\\.0\\.1:${primary.port} with 1 replica \\(127\\.0\\.0\\.1:${replica.port} online, lag \\d+ s\\)$`)),
    });
    expect(check('redis.appendonly')).toMatchObject({ status: 'ok', summary: 'appendonly yes: a restart of Redis keeps what it acknowledged' });
    expect(check('redis.replication')).toMatchObject({ status: 'warn', summary: expect.stringContaining('min-replicas-to-write 0: the primary takes writes no replica has yet') });
    expect(check('redis.replication').fix).toBe('set min-replicas-to-write 1 and min-replicas-max-lag 10 (or less) in redis.conf (CONFIG SET applies them now)');

    // As the operator is told: the next look finds nothing missing.
    await primary.command('CONFIG', 'SET', 'min-replicas-to-write', '1');
    await primary.command('CONFIG', 'SET', 'min-replicas-max-lag', '5');
    try {
      const after = await report();
      expect(after('redis.replication')).toMatchObject({ status: 'ok', summary: 'min-replicas-to-write 1, min-replicas-max-lag 5 s: a write is taken only while a replica is at most 5 s behind' });
    } finally {
      await primary.command('CONFIG', 'SET', 'min-replicas-to-write', '0');
      await primary.command('CONFIG', 'SET', 'min-replicas-max-lag', '10');
    }
  });

  it('a URL pointed at a Sentinel is refused by the doctor, run and an embedded agent, with the settings to use instead', { timeout: 30_000 }, async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const check = await (await doctorSetup(emu, fx, { url: topo.sentinelUrl }))();
    const where = `redis ${topo.sentinelUrl}`;
    expect(check('redis.server')).toMatchObject({ status: 'fail', summary: `${where} is a Sentinel (it monitors ${topo.masterName}), not a Redis server: every command would fail there` });
    const fix =
      `set state.redis.sentinel.masterName (LISTING_AGENT_STATE_REDIS_SENTINEL_MASTER_NAME) to ${topo.masterName} and state.redis.sentinel.nodes ` +
      "(LISTING_AGENT_STATE_REDIS_SENTINEL_NODES) to the Sentinels' host:port (this one among them), instead of state.redis.url (LISTING_AGENT_STATE_REDIS_URL)";
    expect(check('redis.server').fix).toBe(fix);
    for (const name of ['redis.role', 'redis.appendonly', 'redis.replication', 'redis.leader']) expect(check(name).status, name).toBe('skip');

    // The daemon refuses to start, in the same words, as a configuration error.
    const cwd = await mkdtemp(join(tmpdir(), 'la-run-sentinel-'));
    const config = { service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 }, health: { enabled: false }, state: { redis: { url: topo.sentinelUrl } } };
    await writeFile(join(cwd, 'agent.json'), JSON.stringify(config));
    const run = await runCliInProcess(['run', '--config', 'agent.json'], { cwd, env: {} });
    expect(run.code).toBe(78);
    expect(run.stderr).toBe(`listing-agent run: ${where} is a Sentinel (it monitors ${topo.masterName}), not a Redis server: every command would fail there: ${fix}\n`);

    // Embedded, the agent names the keys of its config alone.
    const agent = createListingAgent({ config: { ...config, state: { directory: await tempDir('la-sentinel-'), redis: { url: topo.sentinelUrl } } } });
    agent.on('error', () => undefined);
    const refused = await agent.start().then(
      () => undefined,
      (error: unknown) => error,
    );
    await agent.stop();
    expect(refused).toBeInstanceOf(RedisServerError);
    expect((refused as Error).message).toContain(`set state.redis.sentinel.masterName to ${topo.masterName} and state.redis.sentinel.nodes to the Sentinels'`);
    expect((refused as Error).message).not.toContain('LISTING_AGENT_');
  });

  it('connects to the primary the Sentinels name, and follows it across SENTINEL FAILOVER', { timeout: 40_000 }, async () => {
    const connection = createRedisConnection({ sentinel: sentinel(), prefix: 'follow:', reconnectDelaysMs: [50] });
    const servers: RedisServer[] = [];
    connection.on('server', (server) => servers.push(server));
    connection.start();
    try {
      await connection.whenUp({ timeoutMs: 10_000 });
      const first = connection.server!;
      expect(first).toMatchObject({ role: 'primary', address: `127.0.0.1:${await topo.primaryPort()}`, runId: expect.stringMatching(/^[0-9a-f]{40}$/) });
      expect(connection.describe()).toBe(`redis ${topo.masterName} (Sentinels ${topo.nodes.join(', ')})`);
      expect(connection.serverChangedSince(first)).toBe(false);
      await connection.client.set(connection.key('before'), '1');
      // Wait for the replica to have it, as a write confirmed on it would be.
      expect(await connection.client.sendCommand(['WAIT', '1', '1000'])).toBe(1);

      const promoted = await topo.failover();
      await waitFor('the connection on the promoted replica', () => connection.isUp && connection.server?.address === `127.0.0.1:${promoted}`, 15_000);
      expect(connection.serverChangedSince(first)).toBe(true);
      expect(servers.map((server) => server.address)).toEqual([first.address, `127.0.0.1:${promoted}`]);
      expect(await connection.client.get(connection.key('before'))).toBe('1');
      await connection.client.set(connection.key('after'), '2');
      const { primary } = await topo.roles();
      expect(await primary.command('GET', 'follow:after')).toContain('2');
    } finally {
      await connection.close();
    }
  });

  it('an agent through Sentinel keeps working across SENTINEL FAILOVER: pushed stats posted, webhook votes recorded', { timeout: 60_000 }, async () => {
    const emu = await startTestEmulator({ settings: { allowHttpLoopback: true, v1RequestsPerSecond: 10_000, deliveryRetryDelaysMs: [300, 600, 1_000, 2_000] } });
    const fx = setupBot(emu);
    const voter = emu.admin.createUser({ username: 'voter' });
    const hook = await startVoteHookServer();
    const { ports, secrets } = await webhooksFor(emu, fx, 1);
    const pushPort = await freePort();
    // A lease longer than the failover's outage: taking back what a failover lost is the rest of issue 35.
    const agent: ListingAgent = createListingAgent({
      config: {
        service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 },
        state: {
          directory: await tempDir('la-sentinel-agent-'),
          redis: { sentinel: { masterName: topo.masterName, nodes: [...topo.nodes] }, lease: '10s', agentId: 'through-sentinel', prefix: `agent-${(prefixes += 1)}:` },
        },
        health: { listen: '127.0.0.1:0', adminToken: ADMIN_TOKEN },
        stats: { enabled: true, source: 'push', mode: 'patch', interval: '1h', push: { listen: `127.0.0.1:${pushPort}`, key: PUSH_KEY } },
        votes: { enabled: false, hooks: [{ url: `${hook.url}/reward`, name: 'reward', retries: 10 }] },
        webhooks: { enabled: true, listen: `127.0.0.1:${ports[0]}`, secrets },
      },
      reconnectDelaysMs: [200],
    });
    agent.on('error', () => undefined);
    const serverCounts = () => emu.admin.metrics(fx.projectId).map((m) => m.metrics.server_count);
    const push = (shards: number[]) => call(`http://127.0.0.1:${pushPort}/stats`, { method: 'POST', bearer: PUSH_KEY, json: { shards } });
    const vote = () => {
      const cast = emu.admin.castVote({ project_id: fx.projectId, user_id: voter.id, created_at: new Date().toISOString() });
      return voteKey(cast.user_id, cast.created_at);
    };
    try {
      await agent.start();
      await waitFor('the agent to lead', () => agent.leadership?.isLeader === true, 10_000);
      expect((await push([10, 20])).status).toBe(204);
      await waitFor('the pushed sum posted', () => serverCounts().includes(30));
      const before = vote();
      await waitFor('the first vote rewarded', () => hook.calls.some((c) => c.key === before));

      const promoted = await topo.failover();
      const onPromoted = () => agent.readiness.snapshot().components.redis?.detail.endsWith(`: primary 127.0.0.1:${promoted}`) === true;
      await waitFor('the agent on the new primary, leading', () => onPromoted() && agent.leadership?.isLeader === true, 15_000);
      // Readiness follows the capabilities' own timers: wait for it.
      await waitFor('the agent ready', async () => (await call(`${agent.healthServerUrl}/readyz`)).status === 200, 10_000);
      expect((await call(`${agent.healthServerUrl}/metrics`)).text).toContain('listing_agent_redis_up 1');

      expect((await push([11, 20])).status).toBe(204);
      // Posted now, as an operator would from the status page (the next scheduled post is an hour away).
      const posted = await call(`${agent.healthServerUrl}/status/actions/post-stats`, { method: 'POST', bearer: ADMIN_TOKEN, json: {} });
      expect(posted.body).toMatchObject({ posted: [{ target: 'v1', servers: 31, shards: 2 }], failed: [] });
      expect(serverCounts()).toEqual([30, 31]);
      const after = vote();
      await waitFor('the vote after the failover rewarded', () => hook.calls.some((c) => c.key === after), 15_000);
      await emu.admin.idle();
      // Recorded on the new primary before the 2xx, once; the first vote was not rewarded again.
      const attempts = emu.admin.deliveries(fx.projectId).flatMap((d) => d.attempts);
      expect(attempts.some((a) => a.status === 204)).toBe(true);
      expect(hook.calls.filter((c) => c.key === before)).toHaveLength(1);
      expect(hook.calls.filter((c) => c.key === after)).toHaveLength(1);
      const { primary } = await topo.roles();
      expect(primary.port).toBe(promoted);
    } finally {
      await agent.stop();
    }
  });
});
