import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createListingAgent, type ListingAgent } from '../../../src/agent/agent.js';
import type { CheckResult, DoctorReport } from '../../../src/doctor/types.js';
import { runCliInProcess } from '../../helpers/cli.js';
import { setupBot, startTestEmulator, type BotFixture, type TestEmulator } from '../../helpers/emulator.js';
import { call } from '../../helpers/http.js';
import { startTestRedis, type TestRedis } from '../../helpers/redis.js';
import { startTcpEndpoint, type TcpEndpoint } from '../../helpers/tcp-endpoint.js';
import { programPath } from '../../setup/provided.js';
import { tempDir, waitFor } from '../agent/redis-fixture.js';

/**
 * A connection that lands on a replica, through an endpoint that points there (a managed Redis's
 * name before it moves) or on a primary demoted under it (READONLY): the agent is not ready and
 * says why on /readyz and /metrics, leads nothing, and is ready and leads again by itself once
 * the endpoint leads to the primary. The doctor says the same, with the fix.
 */

const agents: ListingAgent[] = [];
let prefixes = 0;

describe.skipIf(!programPath('redis-server'))('an agent whose Redis is a replica', () => {
  let primary: TestRedis;
  let replica: TestRedis;
  let endpoint: TcpEndpoint;
  beforeAll(async () => {
    primary = await startTestRedis();
    replica = await startTestRedis({ args: ['--replicaof', '127.0.0.1', String(primary.port)] });
  });
  afterAll(async () => {
    await replica?.close();
    await primary?.close();
  });
  afterEach(async () => {
    await Promise.all(agents.splice(0).map((agent) => agent.stop()));
    await endpoint?.close();
    // As it was: the replica follows the primary.
    await primary.command('REPLICAOF', 'NO', 'ONE');
    await replica.command('REPLICAOF', '127.0.0.1', String(primary.port));
  });

  async function startAgent(emu: TestEmulator, fx: BotFixture, url: string): Promise<ListingAgent> {
    const agent = createListingAgent({
      config: {
        service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 },
        state: { directory: await tempDir('la-replica-'), redis: { url, lease: '2s', agentId: 'on-replica', prefix: `replica-${(prefixes += 1)}:` } },
        health: { listen: '127.0.0.1:0' },
      },
      reconnectDelaysMs: [100, 200],
    });
    agent.on('error', () => undefined);
    agents.push(agent);
    await agent.start();
    return agent;
  }

  it('is not ready through an endpoint that leads to a replica, says why, leads nothing, and recovers when the endpoint moves', { timeout: 30_000 }, async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    endpoint = await startTcpEndpoint(replica.port);
    const agent = await startAgent(emu, fx, endpoint.url);

    // Also when the start's wait for Redis ends while the connection is between two looks at the
    // replica (a loaded machine): the replica seen stays what /readyz says.
    await waitFor('the replica seen', async () => (await call(`${agent.healthServerUrl}/readyz`)).body.components.redis.detail.includes('replica'));
    const ready = await call(`${agent.healthServerUrl}/readyz`);
    expect(ready.status).toBe(503);
    expect(ready.body.components.redis).toEqual({
      ready: false,
      since: expect.any(Number),
      detail:
        `redis ${endpoint.url}: on 127.0.0.1:${endpoint.port}, a replica (read-only) of 127.0.0.1:${primary.port}, not on the primary: not ready, ` +
        'and leading nothing; reconnecting until state.redis.url leads to the primary; webhook votes are answered 503 until the primary is reached',
    });
    const metrics = (await call(`${agent.healthServerUrl}/metrics`)).text;
    expect(metrics).toContain('listing_agent_redis_up 0');
    expect(metrics).toContain('listing_agent_leader{agent="on-replica"} 0');
    expect(agent.leadership?.isLeader).toBe(false);

    // The endpoint moves to the primary; the connection already open stays on the replica, as
    // DNS would leave it: the agent reconnects by itself and finds the primary.
    endpoint.move(primary.port);
    await waitFor('the agent ready on the primary', async () => (await call(`${agent.healthServerUrl}/readyz`)).status === 200, 10_000);
    await waitFor('the agent leading', () => agent.leadership?.isLeader === true, 5_000);
    expect((await call(`${agent.healthServerUrl}/metrics`)).text).toContain('listing_agent_redis_up 1');
  });

  it('a leader whose primary is demoted under it (READONLY) stands down and is not ready, until it is the primary again', { timeout: 30_000 }, async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const agent = await startAgent(emu, fx, primary.url);
    await waitFor('the agent leading', () => agent.leadership?.isLeader === true, 5_000);

    // A failover by hand: the replica is promoted, the old primary follows it.
    await replica.command('REPLICAOF', 'NO', 'ONE');
    await primary.command('REPLICAOF', '127.0.0.1', String(replica.port));
    await waitFor('the leader to stand down', () => agent.leadership?.isLeader === false, 5_000);
    const ready = await call(`${agent.healthServerUrl}/readyz`);
    expect(ready.status).toBe(503);
    expect(ready.body.components.redis.detail).toContain(`on 127.0.0.1:${primary.port}, a replica (read-only) of 127.0.0.1:${replica.port}, not on the primary`);
    expect(ready.body.components.leader.detail).toMatch(/^standing by/);

    await primary.command('REPLICAOF', 'NO', 'ONE');
    await waitFor('the agent ready again', async () => (await call(`${agent.healthServerUrl}/readyz`)).status === 200, 10_000);
    await waitFor('the agent leading again', () => agent.leadership?.isLeader === true, 5_000);
  });

  it('doctor fails redis.server on a replica, with the fix, and skips the topology', { timeout: 20_000 }, async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const cwd = await mkdtemp(join(tmpdir(), 'la-doctor-replica-'));
    const config = { service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 }, health: { enabled: false }, state: { redis: { url: replica.url } } };
    await writeFile(join(cwd, 'agent.json'), JSON.stringify(config));
    const res = await runCliInProcess(['doctor', '--config', 'agent.json', '--json', '--timeout', '2000'], { cwd, env: {} });
    const report = JSON.parse(res.stdout) as DoctorReport;
    const check = (name: string) => report.checks.find((c) => c.name === name) as CheckResult;
    expect(check('redis.server')).toMatchObject({
      status: 'fail',
      summary: `redis ${replica.url} reaches 127.0.0.1:${replica.port}, a replica (read-only) of 127.0.0.1:${primary.port}: the agent is not ready there, and leads nothing`,
      fix: 'point state.redis.url (LISTING_AGENT_STATE_REDIS_URL) at the primary, or at an endpoint that follows it, or set state.redis.sentinel',
    });
    for (const name of ['redis.role', 'redis.appendonly', 'redis.replication', 'redis.leader']) expect(check(name).status, name).toBe('skip');
    expect(res.code).toBe(2);
  });
});
