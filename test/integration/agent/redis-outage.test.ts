import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createListingAgent, type ListingAgent } from '../../../src/agent/agent.js';
import type { Capability } from '../../../src/runtime/capability.js';
import { voteKey } from '../../../src/votes/types.js';
import { setupBot, startTestEmulator } from '../../helpers/emulator.js';
import { call } from '../../helpers/http.js';
import { startTestRedis, type TestRedis } from '../../helpers/redis.js';
import { programPath } from '../../setup/provided.js';
import { startVoteHookServer } from '../../helpers/vote-hook-server.js';
import { sleep, tempDir, waitFor, webhooksFor } from './redis-fixture.js';

/**
 * Redis stopped and restarted under running agents: webhook votes during the outage are answered
 * 503 (never 2xx: the vote could not be recorded), `/readyz` says Redis is down, leadership stops,
 * and once Redis is back everything resumes and every vote fires exactly once. Also: an agent
 * started while Redis is down starts anyway and brings its capabilities up when Redis comes.
 */

const agents: ListingAgent[] = [];

describe.skipIf(!programPath('redis-server'))('Redis down under running agents', () => {
  let redis: TestRedis;
  /** Whether a test left Redis stopped (starting a running one would start a second server). */
  let redisStopped = false;
  const stopRedis = async () => {
    await redis.stop();
    redisStopped = true;
  };
  const startRedis = async () => {
    await redis.start();
    redisStopped = false;
  };
  beforeAll(async () => {
    redis = await startTestRedis();
  });
  afterAll(async () => {
    await redis?.close();
  });
  afterEach(async () => {
    await Promise.all(agents.splice(0).map((agent) => agent.stop({ deadlineMs: 3_000 })));
    if (redisStopped) await redis.start();
    redisStopped = false;
    await redis.command('FLUSHALL');
  });

  it('answers webhook votes 503 while Redis is down, says so, and loses nothing when it returns', { timeout: 40_000 }, async () => {
    const emu = await startTestEmulator({
      settings: { allowHttpLoopback: true, votesPageSize: 20, v1RequestsPerSecond: 10_000, deliveryRetryDelaysMs: [500, 1_000, 1_500, 2_000, 3_000] },
    });
    const fx = setupBot(emu);
    const voters = Array.from({ length: 10 }, (_, i) => emu.admin.createUser({ username: `voter${i}` }));
    const hook = await startVoteHookServer();
    const { ports, secrets } = await webhooksFor(emu, fx, 2);
    for (const [i, name] of ['p', 'q'].entries()) {
      const agent = createListingAgent({
        config: {
          service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 },
          state: { directory: await tempDir('la-outage-'), redis: { url: redis.url, lease: '2s', agentId: name } },
          health: { listen: '127.0.0.1:0' },
          votes: { enabled: true, pollInterval: '5s', lookback: '1h', hooks: [{ url: `${hook.url}/${name}`, name: 'reward', retries: 10 }] },
          webhooks: { enabled: true, listen: `127.0.0.1:${ports[i]}`, secrets },
        },
        reconnectDelaysMs: [200],
      });
      agent.on('error', () => undefined);
      agents.push(agent);
    }
    await Promise.all(agents.map((agent) => agent.start()));
    await waitFor('a leader', () => agents.some((agent) => agent.leadership!.isLeader));

    const cast: string[] = [];
    const castVote = () => {
      const vote = emu.admin.castVote({ project_id: fx.projectId, user_id: voters[cast.length % voters.length]!.id, created_at: new Date(Date.now() - 1_000 + cast.length).toISOString() });
      cast.push(voteKey(vote.user_id, vote.created_at));
    };
    for (let i = 0; i < 5; i += 1) castVote();
    await waitFor('the first votes rewarded', () => hook.calls.length === 5);

    await stopRedis();
    const stoppedAt = Date.now();
    await waitFor('both agents to see Redis down', () => agents.every((agent) => agent.readiness.snapshot().components.redis?.ready === false), 5_000);
    for (const agent of agents) {
      const ready = await call(`${agent.healthServerUrl}/readyz`);
      expect(ready.status).toBe(503);
      expect(ready.body.components.redis.detail).toMatch(/is down/);
      expect((await call(`${agent.healthServerUrl}/metrics`)).text).toContain('listing_agent_redis_up 0');
    }
    // Votes during the outage: delivered to both agents, which cannot record them.
    for (let i = 0; i < 5; i += 1) castVote();
    await sleep(1_200);
    // Nobody leads without Redis: each stepped down by its own clock.
    await waitFor('no leader', () => agents.every((agent) => !agent.leadership!.isLeader), 3_000);
    expect(hook.calls).toHaveLength(5);

    const restartAt = Date.now();
    await startRedis();
    await waitFor('Redis up again on both', () => agents.every((agent) => agent.readiness.snapshot().components.redis?.ready === true), 10_000);
    await waitFor('a leader again', () => agents.some((agent) => agent.leadership!.isLeader), 5_000);
    await waitFor('every vote rewarded', () => new Set(hook.calls.map((c) => c.key)).size === cast.length, 20_000);
    await emu.admin.idle();

    // Never a 2xx for a delivery made while Redis was down; some were 503.
    const duringOutage = emu.admin
      .deliveries(fx.projectId)
      .flatMap((d) => d.attempts)
      .filter((a) => Date.parse(a.at) > stoppedAt + 100 && Date.parse(a.at) + a.duration_ms < restartAt);
    expect(duringOutage.length).toBeGreaterThan(0);
    expect(duringOutage.filter((a) => a.status !== null && a.status < 300)).toEqual([]);
    expect(duringOutage.some((a) => a.status === 503)).toBe(true);
    // Every vote once, whichever road and agent it came by.
    expect(hook.calls.filter((c) => (hook.counts().get(c.key) ?? 0) > 1).map((c) => `${c.key} ${c.path} ${c.road}`)).toEqual([]);
    expect(hook.calls).toHaveLength(cast.length);
    expect(agents.filter((agent) => agent.leadership!.isLeader)).toHaveLength(1);
    // Readiness follows Redis's return by the agents' own reconnect and lease timers: wait for it.
    for (const agent of agents) {
      await waitFor('every agent ready again', async () => (await call(`${agent.healthServerUrl}/readyz`)).status === 200, 10_000);
    }
  });

  it('starts while Redis is down, says so, and starts its capabilities when Redis comes', { timeout: 30_000 }, async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    await stopRedis();
    const starts: string[] = [];
    const capability: Capability = {
      name: 'probe',
      async start(context) {
        starts.push('start');
        context.readiness.set('probe', true, 'running');
      },
      async stop() {
        starts.push('stop');
      },
    };
    const agent = createListingAgent({
      config: {
        service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 },
        state: { directory: await tempDir('la-outage-'), redis: { url: redis.url, lease: '2s', agentId: 'late' } },
        health: { listen: '127.0.0.1:0' },
      },
      capabilities: [capability],
      reconnectDelaysMs: [60_000],
    });
    agent.on('error', () => undefined);
    agents.push(agent);
    await agent.start();
    expect(agent.phase).toBe('connecting');
    const ready = await call(`${agent.healthServerUrl}/readyz`);
    expect(ready.status).toBe(503);
    expect(ready.body.components.redis).toMatchObject({ ready: false, detail: expect.stringContaining('not reachable') });
    expect(ready.body.components.service.ready).toBe(true);
    expect(starts).toEqual([]);

    await startRedis();
    // Not after the 60 s retry delay: at once when Redis is back.
    await waitFor('the capabilities', () => agent.phase === 'running', 10_000);
    await waitFor('the lease', () => agent.leadership!.isLeader === true, 5_000);
    expect(starts).toEqual(['start']);
    expect((await call(`${agent.healthServerUrl}/readyz`)).status).toBe(200);
  });

  it('a capability failing to start stops those started before it, so the retry starts each once', { timeout: 20_000 }, async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const calls: string[] = [];
    let failures = 1;
    const capability = (name: string, fail = false): Capability => ({
      name,
      async start(context) {
        calls.push(`start ${name}`);
        if (fail && failures-- > 0) throw new Error(`${name} failed`);
        context.readiness.set(name, true, 'running');
      },
      async stop() {
        calls.push(`stop ${name}`);
      },
    });
    const agent = createListingAgent({
      config: { service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 }, state: { directory: await tempDir('la-restart-') }, health: { enabled: false } },
      capabilities: [capability('a'), capability('b'), capability('c', true)],
      reconnectDelaysMs: [50],
    });
    agent.on('error', () => undefined);
    agents.push(agent);
    await agent.start();
    await waitFor('running', () => agent.phase === 'running', 5_000);
    expect(calls).toEqual(['start a', 'start b', 'start c', 'stop c', 'stop b', 'stop a', 'start a', 'start b', 'start c']);
    await agent.stop();
    expect(calls.slice(9)).toEqual(['stop c', 'stop b', 'stop a']);
  });
});
