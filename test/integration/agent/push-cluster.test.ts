import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createListingAgent, type ListingAgent } from '../../../src/agent/agent.js';
import { setupBot, startTestEmulator, type BotFixture, type TestEmulator } from '../../helpers/emulator.js';
import { call } from '../../helpers/http.js';
import { startTestRedis, type TestRedis } from '../../helpers/redis.js';
import { programPath } from '../../setup/provided.js';
import { freePort, tempDir, waitFor } from './redis-fixture.js';

/**
 * Two in-process agents on one real Redis with `stats.source: push`: every agent takes pushes (a
 * standby too), the counts any agent received are shared through Redis, the leader posts the sum
 * of the newest push of each shard, a new leader posts at once from Redis without a new push, and
 * a push to a standby while Redis is down is answered 202, held, and written when Redis returns.
 */

const KEY = 'push-cluster-key-0123456789abcdef';
const ADMIN_TOKEN = 'push-cluster-admin-token-0123456789';
const LEASE = '2s';

interface PushAgent {
  name: string;
  agent: ListingAgent;
  push: string;
  posted: number[];
}

const running: ListingAgent[] = [];

describe.skipIf(!programPath('redis-server'))('push stats with several agents on one Redis', () => {
  let redis: TestRedis;
  beforeAll(async () => {
    redis = await startTestRedis();
  });
  afterAll(async () => {
    await redis?.close();
  });
  afterEach(async () => {
    await Promise.all(running.splice(0).map((agent) => agent.stop()));
    await redis.command('FLUSHALL');
  });

  async function startAgents(emu: TestEmulator, fx: BotFixture): Promise<{ leader: PushAgent; standby: PushAgent }> {
    const made: PushAgent[] = [];
    for (const name of ['a', 'b']) {
      const port = await freePort();
      const agent = createListingAgent({
        config: {
          service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 },
          state: { directory: await tempDir('la-push-cluster-'), redis: { url: redis.url, lease: LEASE, agentId: name } },
          health: { listen: '127.0.0.1:0', adminToken: ADMIN_TOKEN },
          stats: { enabled: true, source: 'push', mode: 'patch', interval: '1h', push: { listen: `127.0.0.1:${port}`, key: KEY } },
        },
        reconnectDelaysMs: [200],
      });
      agent.on('error', () => undefined);
      const entry: PushAgent = { name, agent, push: `http://127.0.0.1:${port}/stats`, posted: [] };
      agent.on('posted', (result) => entry.posted.push(...result.samples.map((sample) => sample.serverCount)));
      made.push(entry);
      running.push(agent);
    }
    await Promise.all(made.map(({ agent }) => agent.start()));
    await waitFor('a leader', () => made.some(({ agent }) => agent.leadership?.isLeader));
    const leader = made.find(({ agent }) => agent.leadership!.isLeader)!;
    const standby = made.find((entry) => entry !== leader)!;
    await waitFor('the standby to see the leader', () => standby.agent.leadership!.leaderId === leader.name);
    return { leader, standby };
  }

  const push = (to: PushAgent, json: unknown) => call(to.push, { method: 'POST', bearer: KEY, json });
  const serverCounts = (emu: TestEmulator, fx: BotFixture) => emu.admin.metrics(fx.projectId).map((m) => m.metrics.server_count);
  /** Posts now (the status page's action, as an operator would): the servers posted, or the errors. */
  const postNow = async (to: PushAgent) => {
    const res = await call(`${to.agent.healthServerUrl}/status/actions/post-stats`, { method: 'POST', bearer: ADMIN_TOKEN, json: {} });
    expect(res.status).toBe(200);
    return res.body as { posted: { servers: number | null }[]; failed: { error: string }[] };
  };

  it('every agent takes pushes; the leader posts the sum of the newest per shard; a new leader posts at once from Redis', { timeout: 30_000 }, async () => {
    const emu = await startTestEmulator({ settings: { v1RequestsPerSecond: 10_000 } });
    const fx = setupBot(emu);
    const { leader, standby } = await startAgents(emu, fx);

    // Every agent listens, and says so on /readyz.
    for (const { agent } of [leader, standby]) {
      const ready = await call(`${agent.healthServerUrl}/readyz`);
      expect(ready.body.components.push).toEqual(expect.objectContaining({ ready: true, detail: expect.stringMatching(/^listening on http:\/\/127\.0\.0\.1:\d+\/stats; pushes shared through Redis$/) }));
    }

    // The standby accepts a push; the leader has half the shards and names the missing one.
    expect((await push(standby, { shard_id: 0, shard_count: 2, server_count: 100 })).status).toBe(204);
    await waitFor('the leader to see shard 0', () => /no report from shard 1\b/.test(leader.agent.readiness.snapshot().components.stats?.detail ?? ''));
    expect(leader.agent.readiness.snapshot().components.stats?.detail).toContain('stats.push.staleAfter');
    // The other half to the leader: it posts the sum at once.
    expect((await push(leader, { shard_id: 1, shard_count: 2, server_count: 200 })).status).toBe(204);
    await waitFor('the sum posted', () => serverCounts(emu, fx).includes(300));

    // Pushes split and overlapping between the two: the newest of each shard counts.
    // (A 204 means the push is in Redis: the leader's next post has it.)
    expect((await push(standby, [{ shard_id: 0, shard_count: 2, server_count: 110 }, { shard_id: 1, shard_count: 2, server_count: 210 }])).status).toBe(204);
    expect((await postNow(leader)).posted).toEqual([{ target: 'v1', servers: 320, shards: 2 }]);
    expect((await push(leader, { shards: [120, 210] })).status).toBe(204);
    expect((await postNow(leader)).posted).toEqual([{ target: 'v1', servers: 330, shards: 2 }]);
    expect((await push(standby, { shard_id: 1, shard_count: 2, server_count: 230 })).status).toBe(204);
    expect((await postNow(leader)).posted).toEqual([{ target: 'v1', servers: 350, shards: 2 }]);
    expect(standby.posted).toEqual([]);
    expect(serverCounts(emu, fx)).toEqual([300, 320, 330, 350]);
    // A wrong key or shard count is refused by a standby as by a leader.
    expect((await call(standby.push, { method: 'POST', bearer: 'wrong-key-0123456789', json: { shards: [1, 1] } })).status).toBe(401);

    // The last push reaches the leader only, and the service refuses its post: nothing of it was posted.
    emu.admin.injectFault({ method: 'PATCH', path: '/api/v1/projects/@me/metrics', status: 503, count: 1_000 });
    expect((await push(leader, { shard_id: 0, shard_count: 2, server_count: 140 })).status).toBe(204);
    expect((await postNow(leader)).failed).not.toEqual([]);
    emu.admin.clearFaults();
    const before = serverCounts(emu, fx).length;

    // The leader stops; the standby takes over and posts 370 from Redis, without a push.
    await leader.agent.stop();
    await waitFor('the standby to lead', () => standby.agent.leadership!.isLeader, 5_000);
    const ledAt = Date.now();
    await waitFor('the new leader to post', () => standby.posted.length > 0, 5_000);
    expect(Date.now() - ledAt).toBeLessThan(2_000);
    expect(standby.posted).toEqual([370]);
    expect(serverCounts(emu, fx).slice(before)).toEqual([370]);
  });

  it('a push to a standby while Redis is down is answered 202, held, and posted by the leader when Redis returns', { timeout: 30_000 }, async () => {
    const emu = await startTestEmulator({ settings: { v1RequestsPerSecond: 10_000 } });
    const fx = setupBot(emu);
    const { leader, standby } = await startAgents(emu, fx);
    expect((await push(standby, { shards: [10, 20] })).status).toBe(204);
    await waitFor('30 posted', () => serverCounts(emu, fx).includes(30));

    await redis.stop();
    await waitFor('the standby to see Redis down', () => standby.agent.readiness.snapshot().components.redis?.ready === false, 5_000);
    const held = await push(standby, { shard_id: 0, shard_count: 2, server_count: 15 });
    expect(held.status).toBe(202);
    expect(held.body).toEqual({ held: true, detail: expect.stringContaining('writes the counts there when Redis returns') });
    expect(standby.agent.readiness.snapshot().components.push).toEqual(expect.objectContaining({ ready: true, detail: expect.stringContaining('1 shard report held here until it returns') }));
    expect(await standby.agent.registry.getSingleMetricAsString('listing_agent_push_reports_unshared')).toContain('listing_agent_push_reports_unshared 1');

    await redis.start();
    // The standby writes what it held as soon as Redis is back, without another push.
    await waitFor('the push shared', () => standby.agent.readiness.snapshot().components.push?.detail.endsWith('pushes shared through Redis') === true, 10_000);
    expect(await standby.agent.registry.getSingleMetricAsString('listing_agent_push_reports_unshared')).toContain('listing_agent_push_reports_unshared 0');
    // The leader (the same one, or the other after the outage) posts it.
    await waitFor('a leader again', () => [leader, standby].some(({ agent }) => agent.leadership!.isLeader), 10_000);
    const next = [leader, standby].find(({ agent }) => agent.leadership!.isLeader)!;
    await waitFor('the leader\'s stats running', () => next.agent.readiness.snapshot().components.stats?.ready === true && !/standing by/.test(next.agent.readiness.snapshot().components.stats?.detail ?? ''), 10_000);
    // A leader that took the lease back posts on its own once its counts are ready, and may have
    // posted 35 already (then this post has nothing new to send): either way 35 reaches the
    // service once (seen in a fresh-clone CI run, where the automatic post came first).
    const { posted } = await postNow(next);
    expect(posted.map(({ servers }) => servers).filter((servers) => servers !== 35)).toEqual([]);
    await waitFor('35 posted', () => serverCounts(emu, fx).includes(35), 5_000);
    expect(serverCounts(emu, fx)).toEqual([30, 35]);
  });
});
