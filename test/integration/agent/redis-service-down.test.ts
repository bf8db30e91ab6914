import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createListingAgent, type ListingAgent } from '../../../src/agent/agent.js';
import { voteKey } from '../../../src/votes/types.js';
import { setupBot, startTestEmulator } from '../../helpers/emulator.js';
import { call } from '../../helpers/http.js';
import { startTestRedis, type TestRedis } from '../../helpers/redis.js';
import { programPath } from '../../setup/provided.js';
import { startVoteHookServer } from '../../helpers/vote-hook-server.js';
import { tempDir, waitFor, webhooksFor } from './redis-fixture.js';

/**
 * With `state.redis`, the vote pipeline needs Redis, not the service: two agents whose service
 * lookup fails record signed votes in the shared Redis ledger and reward each once; the leader
 * lease waits for the service (a standby that cannot reach it must not lead). Once the service
 * answers, one agent leads, its cursor lists the same votes, and nothing is rewarded twice.
 */

const agents: ListingAgent[] = [];

describe.skipIf(!programPath('redis-server'))('state.redis, the service down at the start', () => {
  let redis: TestRedis;
  beforeAll(async () => {
    redis = await startTestRedis();
  });
  afterAll(async () => {
    await redis?.close();
  });
  afterEach(async () => {
    await Promise.all(agents.splice(0).map((agent) => agent.stop({ deadlineMs: 3_000 })));
    await redis.command('FLUSHALL');
  });

  it('rewards webhook votes once through the Redis ledger, and the cursor fires nothing again', { timeout: 30_000 }, async () => {
    const emu = await startTestEmulator({ settings: { allowHttpLoopback: true } });
    const fx = setupBot(emu);
    const voters = Array.from({ length: 4 }, (_, i) => emu.admin.createUser({ username: `voter${i}` }));
    const hook = await startVoteHookServer();
    const { ports, secrets } = await webhooksFor(emu, fx, 2);
    emu.admin.injectFault({ path: '/api/v1/projects/@me', status: 503, count: 10_000 });
    for (const [i, name] of ['p', 'q'].entries()) {
      const agent = createListingAgent({
        config: {
          service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 },
          state: { directory: await tempDir('la-redis-down-'), redis: { url: redis.url, lease: '2s', agentId: name } },
          health: { listen: '127.0.0.1:0' },
          votes: { enabled: true, pollInterval: '5s', lookback: '1h', hooks: [{ url: `${hook.url}/${name}`, name: 'reward' }] },
          webhooks: { enabled: true, listen: `127.0.0.1:${ports[i]}`, secrets },
        },
        reconnectDelaysMs: [200],
        transport: { retry: { maxAttempts: 1 } },
      });
      agent.on('error', () => undefined);
      agents.push(agent);
    }
    await Promise.all(agents.map((agent) => agent.start()));
    expect(agents.map((agent) => agent.phase)).toEqual(['connecting', 'connecting']);

    // The emulator delivers each vote to both receivers: signed, verified with the secret alone.
    const cast = voters.map((voter, i) => emu.admin.castVote({ project_id: fx.projectId, user_id: voter.id, created_at: new Date(Date.now() - 60_000 + i).toISOString() }));
    const keys = cast.map((vote) => voteKey(vote.user_id, vote.created_at)).sort();
    await waitFor('every webhook vote rewarded', () => new Set(hook.calls.map((c) => c.key)).size === keys.length);
    await emu.admin.idle();
    const attempts = emu.admin.deliveries(fx.projectId).flatMap((d) => d.attempts);
    expect(attempts.length).toBeGreaterThanOrEqual(keys.length * 2);
    expect(attempts.filter((a) => a.status !== 204)).toEqual([]);
    expect(agents.every((agent) => agent.leadership!.isLeader === false)).toBe(true);
    const ready = await call(`${agents[0]!.healthServerUrl}/readyz`);
    expect(ready.body.components.votes.detail).toMatch(/cursor waits for the service/);

    emu.admin.clearFaults();
    await waitFor('both running', () => agents.every((agent) => agent.phase === 'running'), 10_000);
    await waitFor('a leader', () => agents.some((agent) => agent.leadership!.isLeader), 10_000);
    const leader = agents.find((agent) => agent.leadership!.isLeader)!;
    await waitFor('the leader polled the cursor', async () => (await leader.metrics.votesReceived.get({ road: 'poll' })) >= keys.length, 10_000);
    await Promise.all(agents.map((agent) => agent.votePipeline!.idle()));
    expect(hook.calls.map((c) => c.key).sort()).toEqual(keys);
  });

  it('stops cleanly while it still waits for the service: the receiver closes, nothing leads', { timeout: 20_000 }, async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    emu.admin.injectFault({ path: '/api/v1/projects/@me', status: 503, count: 10_000 });
    const agent = createListingAgent({
      config: {
        service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 },
        state: { directory: await tempDir('la-redis-down-stop-'), redis: { url: redis.url, lease: '2s', agentId: 'waiting' } },
        health: { enabled: false },
        votes: { enabled: true, pollInterval: '5s' },
        webhooks: { enabled: true, listen: '127.0.0.1:0', secrets: ['whs_stop_secret'] },
      },
      reconnectDelaysMs: [100],
      transport: { retry: { maxAttempts: 1 } },
    });
    agent.on('error', () => undefined);
    agent.on('vote', () => undefined);
    await agent.start();
    const url = agent.webhookReceiverUrl!;
    expect((await call(url, { method: 'POST', body: '{}' })).status).toBe(401);
    await agent.stop({ deadlineMs: 3_000 });
    expect(agent.phase).toBe('stopped');
    expect(agent.leadership!.isLeader).toBe(false);
    await expect(call(url, { method: 'POST', body: '{}' })).rejects.toThrow();
  });
});
