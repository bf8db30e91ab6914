import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createListingAgent, type ListingAgent } from '../../../src/agent/agent.js';
import { keySlot } from '../../../src/redis/cluster.js';
import { createRedisConnection, type RedisConnection } from '../../../src/redis/connection.js';
import type { CountSource } from '../../../src/stats/source.js';
import { createRedisVoteLedger } from '../../../src/votes/ledger-redis.js';
import { voteKey, type Vote } from '../../../src/votes/types.js';
import { voteAt } from '../../helpers/votes.js';
import { setupBot, startTestEmulator } from '../../helpers/emulator.js';
import { call } from '../../helpers/http.js';
import { startTestCluster, type TestCluster } from '../../helpers/redis-cluster-servers.js';
import { startVoteHookServer } from '../../helpers/vote-hook-server.js';
import { programPath } from '../../setup/provided.js';
import { tempDir, waitFor, webhooksFor } from '../agent/redis-fixture.js';

/**
 * The agent on a real Redis Cluster of three primaries (redis-server --cluster-enabled yes, the
 * slots split by hand): the connection makes the prefix a hash tag and sends everything to the
 * primary of that one slot; the vote ledger's scripts, which declare every key they touch, run
 * there; two whole agents lead, stand by, post, and reward every vote once; and every key they
 * wrote is in that one slot, on that one primary.
 */

const SLOT = keySlot('{listing-agent}:');

const opened: RedisConnection[] = [];
const agents: ListingAgent[] = [];

async function connect(cluster: TestCluster, prefix = 'listing-agent:'): Promise<RedisConnection> {
  const nodes = cluster.nodes.map((node) => ({ host: '127.0.0.1', port: Number(node.split(':')[1]) }));
  const connection = createRedisConnection({ cluster: { nodes }, prefix, reconnectDelaysMs: [50] });
  opened.push(connection);
  connection.start();
  await connection.whenUp({ timeoutMs: 10_000 });
  return connection;
}

/** Every key of every node, by node port. */
async function keysByNode(cluster: TestCluster): Promise<Map<number, string[]>> {
  const found = new Map<number, string[]>();
  for (const server of cluster.primaries) {
    const reply = await server.command('KEYS', '*');
    // `*2\r\n$5\r\nhello\r\n...`: the bulk strings' lines.
    const lines = reply.split('\r\n');
    const keys = lines.filter((_, i) => i > 0 && lines[i - 1]!.startsWith('$'));
    if (keys.length > 0) found.set(server.port, keys);
  }
  return found;
}

describe.skipIf(!programPath('redis-server'))('Redis Cluster: every key under one hash tag, on the primary of its slot', () => {
  let cluster: TestCluster;
  beforeAll(async () => {
    cluster = await startTestCluster();
  }, 30_000);
  afterAll(async () => {
    await cluster?.close();
  });
  afterEach(async () => {
    await Promise.all(agents.splice(0).map((agent) => agent.stop()));
    await Promise.all(opened.splice(0).map((connection) => connection.close()));
    for (const server of cluster.primaries) await server.command('FLUSHALL');
  });

  it('makes the prefix a hash tag, computes its slot as Redis does, and is up on the primary that holds it', async () => {
    const connection = await connect(cluster);
    expect(connection.prefix).toBe('{listing-agent}:');
    expect(connection.key('state', 'votes:cursor')).toBe('{listing-agent}:state:votes:cursor');
    const primary = await cluster.primaryOf(SLOT);
    expect(connection.server).toMatchObject({ role: 'primary', address: `127.0.0.1:${primary.port}` });
    expect(connection.describe()).toBe(`redis cluster (${cluster.nodes.join(', ')})`);
    const asked = await primary.command('CLUSTER', 'KEYSLOT', connection.key('anything'));
    expect(asked).toBe(`:${SLOT}`);
    // A prefix with a tag of its own is kept; keyless commands go to the slot's primary too.
    const tagged = await connect(cluster, 'bot:{one}:');
    expect(tagged.prefix).toBe('bot:{one}:');
    const info = String(await tagged.client.sendCommand(['INFO', 'server']));
    const taggedPrimary = await cluster.primaryOf(keySlot('{one}'));
    expect(info).toContain(`tcp_port:${taggedPrimary.port}`);
  });

  it('runs the vote ledger: record, hook results, dead letters taken back, orphans claimed, compaction', async () => {
    const connection = await connect(cluster);
    const vote = (user: string): Vote => voteAt(user, Date.now() - 1_000);
    const a = createRedisVoteLedger({ connection, agentId: 'a', leaseMs: 300, keepKeysForMs: 60_000 });
    await a.open();
    const votes = ['1', '2', '3'].map(vote);
    expect((await a.recordPending(votes)).map((v) => v.key)).toEqual(votes.map((v) => v.key));
    expect(await a.recordPending(votes)).toEqual([]);
    await a.recordHookDone(votes[0]!.key, 'reward');
    await a.recordComplete(votes[0]!.key);
    await a.recordDeadLetter({ key: votes[1]!.key, hook: 'reward', vote: votes[1]!, error: 'boom', attempts: 3, failedAt: new Date().toISOString() });
    expect(a.stats()).toMatchObject({ pending: 2, deadLetters: 1 });
    expect((await a.takeDeadLetters({ hook: 'reward' })).map((l) => l.key)).toEqual([votes[1]!.key]);
    // Agent a stops (its heartbeat is released; deleting the key instead races a's own renewal
    // every third of the lease): b claims its pending votes.
    await a.close();
    const b = createRedisVoteLedger({ connection, agentId: 'b', leaseMs: 300, keepKeysForMs: 60_000 });
    const claimed = await b.open();
    expect(claimed.map((entry) => entry.vote.key).sort()).toEqual([votes[1]!.key, votes[2]!.key].sort());
    await b.compact(Date.now() + 3_600_000);
    expect(b.stats()).toMatchObject({ pending: 2, deadLetters: 0 });
    await b.close();
    const byNode = await keysByNode(cluster);
    expect([...byNode.keys()]).toEqual([(await cluster.primaryOf(SLOT)).port]);
  });

  it('two agents: one leads and posts, both take webhooks, every vote rewarded once; every key in the one slot', { timeout: 60_000 }, async () => {
    const emu = await startTestEmulator({ settings: { allowHttpLoopback: true, votesPageSize: 20, v1RequestsPerSecond: 10_000 } });
    const fx = setupBot(emu);
    const voters = Array.from({ length: 5 }, (_, i) => emu.admin.createUser({ username: `voter${i}` }));
    const hook = await startVoteHookServer();
    const { ports, secrets } = await webhooksFor(emu, fx, 2);
    const counts: CountSource = { description: 'test counts', read: async () => ({ ready: true, serverCount: 42, shardCount: 1 }) };
    const nodes = cluster.nodes;
    let posted = 0;
    for (let i = 0; i < 2; i += 1) {
      const agent = createListingAgent({
        config: {
          service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 },
          state: { directory: await tempDir('la-rcluster-'), redis: { cluster: { nodes: [...nodes] }, lease: '2s', agentId: `agent-${i}` } },
          health: { listen: '127.0.0.1:0' },
          stats: { enabled: true, mode: 'patch', interval: '1h' },
          votes: { enabled: true, pollInterval: '5s', lookback: '1h', hooks: [{ url: `${hook.url}/agent-${i}`, name: 'reward' }] },
          webhooks: { enabled: true, listen: `127.0.0.1:${ports[i]}`, secrets },
        },
        countSource: counts,
        reconnectDelaysMs: [200],
      });
      agent.on('error', () => undefined);
      agent.on('posted', () => (posted += 1));
      agents.push(agent);
    }
    await Promise.all(agents.map((agent) => agent.start()));
    await waitFor('a leader', () => agents.some((agent) => agent.leadership?.isLeader));
    await waitFor('the first post', () => posted === 1);
    const cast: string[] = [];
    for (let i = 0; i < 10; i += 1) {
      const made = emu.admin.castVote({ project_id: fx.projectId, user_id: voters[i % voters.length]!.id, created_at: new Date(Date.now() - 10_000 + i).toISOString() });
      cast.push(voteKey(made.user_id, made.created_at));
    }
    await waitFor('every vote rewarded', () => new Set(hook.calls.map((c) => c.key)).size === cast.length, 30_000);
    await emu.admin.idle();
    expect([...hook.counts()].filter(([, n]) => n > 1)).toEqual([]);
    expect(agents.filter((agent) => agent.leadership!.isLeader)).toHaveLength(1);
    for (const agent of agents) {
      const ready = await call(`${agent.healthServerUrl}/readyz`);
      expect(ready.status).toBe(200);
      expect(ready.body.components.redis).toMatchObject({ ready: true });
    }
    const byNode = await keysByNode(cluster);
    expect([...byNode.keys()]).toEqual([(await cluster.primaryOf(SLOT)).port]);
    const keys = [...byNode.values()].flat();
    expect(keys.length).toBeGreaterThan(5);
    expect(keys.filter((key) => !key.startsWith('{listing-agent}:'))).toEqual([]);
  });
});
