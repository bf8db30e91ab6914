import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createListingAgent, type ListingAgent } from '../../../src/agent/agent.js';
import type { ComponentState } from '../../../src/runtime/readiness.js';
import type { CountSource } from '../../../src/stats/source.js';
import { voteKey } from '../../../src/votes/types.js';
import { setupBot, startTestEmulator } from '../../helpers/emulator.js';
import { call } from '../../helpers/http.js';
import { startTestRedis, type TestRedis } from '../../helpers/redis.js';
import { programPath } from '../../setup/provided.js';
import { startVoteHookServer } from '../../helpers/vote-hook-server.js';
import { tempDir, waitFor, webhooksFor } from './redis-fixture.js';

/**
 * Several in-process agents on one real Redis and one emulator: exactly one leads (posts stats,
 * syncs commands, polls the votes cursor), the others stand by and still take webhook votes; a
 * vote delivered to every agent and seen on the cursor fires its hook once; /readyz and /metrics
 * of each say who leads; a graceful stop of the leader hands over at once. A standby that starts
 * while another agent leads names it from its first answer on (it reads the lease's holder before
 * its health server answers); `none yet` only when nobody holds the lease.
 */

const LEASE = '2s';
const ADMIN_TOKEN = 'cluster-admin-token-0123456789';

const agents: ListingAgent[] = [];

describe.skipIf(!programPath('redis-server'))('several agents on one Redis', () => {
  let redis: TestRedis;
  beforeAll(async () => {
    redis = await startTestRedis();
  });
  afterAll(async () => {
    await redis?.close();
  });
  afterEach(async () => {
    // The agents first: a flush under running agents would be a Redis losing its data.
    await Promise.all(agents.splice(0).map((agent) => agent.stop()));
    await redis.command('FLUSHALL');
  });

  it.each([2, 3])('%i agents: one leads and does the leader work, the others stand by; every vote fires once', { timeout: 40_000 }, async (count) => {
    const emu = await startTestEmulator({ settings: { allowHttpLoopback: true, votesPageSize: 20, v1RequestsPerSecond: 10_000 } });
    const fx = setupBot(emu);
    const voters = Array.from({ length: 10 }, (_, i) => emu.admin.createUser({ username: `voter${i}` }));
    const hook = await startVoteHookServer();
    const { ports, secrets } = await webhooksFor(emu, fx, count);
    let serverCount = 42;
    const counts: CountSource = { description: 'test counts', read: async () => ({ ready: true, serverCount, shardCount: 2 }) };

    // Votes from before the agents: only the cursor brings them (the leader's first poll).
    const cast: string[] = [];
    let created = Date.now() - 60_000;
    const castVote = (i: number) => {
      created += 1;
      const vote = emu.admin.castVote({ project_id: fx.projectId, user_id: voters[i % voters.length]!.id, created_at: new Date(created).toISOString() });
      cast.push(voteKey(vote.user_id, vote.created_at));
    };
    for (let i = 0; i < 10; i += 1) castVote(i);

    const posted = new Map<string, number>();
    const synced = new Map<string, string[]>();
    for (let i = 0; i < count; i += 1) {
      const name = `agent-${i}`;
      const agent = createListingAgent({
        config: {
          service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 },
          state: { directory: await tempDir('la-cluster-'), redis: { url: redis.url, lease: LEASE, agentId: name } },
          health: { listen: '127.0.0.1:0', adminToken: ADMIN_TOKEN },
          stats: { enabled: true, mode: 'patch', interval: '1h' },
          commands: { enabled: true },
          votes: { enabled: true, pollInterval: '5s', lookback: '1h', hooks: [{ url: `${hook.url}/${name}`, name: 'reward' }] },
          webhooks: { enabled: true, listen: `127.0.0.1:${ports[i]}`, secrets },
        },
        countSource: counts,
        commands: [{ name: 'ping', description: 'Ping the bot' }],
        reconnectDelaysMs: [200],
      });
      agent.on('error', () => undefined);
      agent.on('posted', () => posted.set(name, (posted.get(name) ?? 0) + 1));
      agent.on('commandsSynced', (result) => synced.set(name, [...(synced.get(name) ?? []), result.skipped ? 'unchanged' : 'synced']));
      agents.push(agent);
    }
    await Promise.all(agents.map((agent) => agent.start()));
    await waitFor('a leader', () => agents.some((agent) => agent.leadership?.isLeader));
    const leader = agents.find((agent) => agent.leadership!.isLeader)!;
    const leaderId = leader.leadership!.agentId;
    const standbys = agents.filter((agent) => agent !== leader);
    await waitFor('the standbys to see the leader', () => standbys.every((agent) => agent.leadership!.leaderId === leaderId));

    // The leader posts and syncs; the first poll brings the old votes.
    await waitFor('the first post', () => posted.get(leaderId) === 1);
    await waitFor('the commands sync', () => synced.get(leaderId)?.length === 1);
    await waitFor('the votes before the start', () => new Set(hook.calls.map((c) => c.key)).size === 10);

    // Votes now: delivered by webhook to every agent, and on the cursor too.
    for (let i = 0; i < 20; i += 1) castVote(i);
    await waitFor('every vote rewarded', () => new Set(hook.calls.map((c) => c.key)).size === cast.length);
    await emu.admin.idle();

    expect(agents.filter((agent) => agent.leadership!.isLeader)).toHaveLength(1);
    expect([...posted.keys()]).toEqual([leaderId]);
    expect([...synced.keys()]).toEqual([leaderId]);
    expect(emu.admin.metrics(fx.projectId)).toHaveLength(1);
    for (const agent of standbys) {
      expect(await agent.metrics.votesReceived.get({ road: 'poll' })).toBe(0);
      expect(agent.readiness.snapshot().components.votes?.detail).toContain(`standing by (leader: ${leaderId})`);
      expect(agent.readiness.snapshot().components.stats?.detail).toBe(`standing by (leader: ${leaderId})`);
      expect(agent.readiness.snapshot().components.commands).toMatchObject({ ready: true, detail: `standing by (leader: ${leaderId})` });
      await expect(agent.syncCommands()).rejects.toThrow(/stands by/);
    }
    expect(await leader.metrics.votesReceived.get({ road: 'poll' })).toBeGreaterThanOrEqual(10);
    // Every agent took webhook deliveries; each vote fired once in all.
    for (const agent of agents) expect(await agent.metrics.webhookDeliveries.get({ outcome: 'accepted' }) + (await agent.metrics.webhookDeliveries.get({ outcome: 'duplicate' }))).toBeGreaterThan(0);
    const twice = [...hook.counts()].filter(([, n]) => n > 1);
    expect(twice).toEqual([]);
    expect(hook.calls).toHaveLength(cast.length);

    // /readyz and /metrics of each say who leads.
    for (const agent of agents) {
      const id = agent.leadership!.agentId;
      const ready = await call(`${agent.healthServerUrl}/readyz`);
      expect(ready.status).toBe(200);
      expect(ready.body.components.redis).toMatchObject({ ready: true });
      if (agent === leader) expect(ready.body.components.leader.detail).toMatch(/^leading \(token \d+\)/);
      else expect(ready.body.components.leader.detail).toContain(`standing by (leader: ${leaderId})`);
      const metrics = (await call(`${agent.healthServerUrl}/metrics`)).text;
      expect(metrics).toContain('listing_agent_redis_up 1');
      expect(metrics).toContain(`listing_agent_leader{agent="${id}"} ${agent === leader ? 1 : 0}`);
      // So does the status page; a standby refuses to post, naming the leader.
      const status = (await call(`${agent.healthServerUrl}/status.json`)).body;
      expect(status.agent.cluster).toEqual({ agentId: id, leader: agent === leader, leaderId });
      if (agent !== leader) {
        const refused = await call(`${agent.healthServerUrl}/status/actions/post-stats`, { method: 'POST', bearer: ADMIN_TOKEN, json: {} });
        expect(refused.status).toBe(409);
        expect(refused.body.error).toBe(`this agent stands by: the leader (${leaderId}) posts the stats; ask it`);
      }
    }

    if (count === 3) {
      // A graceful stop hands over at once; the new leader finds the commands unchanged (the hash
      // is in Redis) and posts the counts, which changed meanwhile (unchanged counts would wait
      // for the keep-alive post: the last post is in Redis too).
      serverCount = 43;
      const firstToken = leader.leadership!.fencingToken!;
      const stoppedAt = Date.now();
      await leader.stop();
      const stopTook = Date.now() - stoppedAt;
      await waitFor('a new leader', () => standbys.some((agent) => agent.leadership!.isLeader), 5_000, 5);
      const handover = Date.now() - stoppedAt;
      const next = standbys.find((agent) => agent.leadership!.isLeader)!;
      const nextId = next.leadership!.agentId;
      expect(next.leadership!.fencingToken).toBeGreaterThan(firstToken);
      await waitFor('the new leader to post', () => posted.get(nextId) === 1);
      await waitFor('the new leader to check the commands', () => synced.get(nextId)?.length === 1);
      expect(synced.get(nextId)).toEqual(['unchanged']);
      expect(standbys.filter((agent) => agent.leadership!.isLeader)).toEqual([next]);
      console.log(`cluster: graceful handover to ${nextId} ${handover} ms after stop() was called (stop took ${stopTook} ms; lease ${LEASE})`);
    }
  });

  it('agent B, started while A leads: its first leader detail, /readyz and capabilities name A; A itself saw none', { timeout: 30_000 }, async () => {
    const emu = await startTestEmulator({ settings: { allowHttpLoopback: true } });
    const fx = setupBot(emu);
    const counts: CountSource = { description: 'test counts', read: async () => ({ ready: true, serverCount: 7, shardCount: 1 }) };
    const make = async (name: string) => {
      const agent = createListingAgent({
        config: {
          service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 },
          // A long lease: A leads throughout, whatever the load on the machine.
          state: { directory: await tempDir('la-standby-'), redis: { url: redis.url, lease: '30s', agentId: name } },
          health: { listen: '127.0.0.1:0' },
          stats: { enabled: true, mode: 'patch', interval: '1h' },
        },
        countSource: counts,
        reconnectDelaysMs: [200],
      });
      agent.on('error', () => undefined);
      const leaderDetails: string[] = [];
      agent.on('readiness', (component: string, state: ComponentState) => {
        if (component === 'leader') leaderDetails.push(state.detail);
      });
      agents.push(agent);
      return { agent, leaderDetails };
    };

    const a = await make('agent-a');
    await a.agent.start();
    await waitFor('A to lead', () => a.agent.leadership!.isLeader === true);
    // Nobody held the lease when A read it: then, and only then, "none yet".
    expect(a.leaderDetails.filter((detail) => detail.startsWith('standing by') && !detail.includes('not known yet'))).toEqual(['standing by (leader: none yet); agent agent-a']);

    const b = await make('agent-b');
    await b.agent.start();
    // Right after start() resolves: B's own try at the lease may still be in flight; A is named anyway.
    const snapshot = b.agent.readiness.snapshot().components;
    expect(snapshot.leader?.detail).toBe('standing by (leader: agent-a); agent agent-b');
    expect(snapshot.stats?.detail).toBe('standing by (leader: agent-a)');
    const ready = await call(`${b.agent.healthServerUrl}/readyz`);
    expect(ready.body.components.leader.detail).toBe('standing by (leader: agent-a); agent agent-b');
    // Every detail B ever reported once Redis was read names A (the one before is from before the health server answered).
    const known = b.leaderDetails.filter((detail) => !detail.includes('not known yet'));
    expect(known.length).toBeGreaterThan(0);
    expect(known.every((detail) => detail === 'standing by (leader: agent-a); agent agent-b')).toBe(true);
    expect(b.agent.leadership!.leaderId).toBe('agent-a');
  });
});
