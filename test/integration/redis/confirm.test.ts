import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createListingAgent, type ListingAgent } from '../../../src/agent/agent.js';
import { createRedisLeadership } from '../../../src/leader/redis-lease.js';
import { createRedisConnection, RedisUnavailableError, type RedisConnection } from '../../../src/redis/connection.js';
import { createRedisStore } from '../../../src/store/redis.js';
import { createRedisVoteLedger } from '../../../src/votes/ledger-redis.js';
import { voteKey } from '../../../src/votes/types.js';
import { setupBot, startTestEmulator } from '../../helpers/emulator.js';
import { call } from '../../helpers/http.js';
import { freezer, startTestRedis, type TestRedis } from '../../helpers/redis.js';
import { startTcpEndpoint } from '../../helpers/tcp-endpoint.js';
import { startVoteHookServer } from '../../helpers/vote-hook-server.js';
import { voteAt } from '../../helpers/votes.js';
import { programPath } from '../../setup/provided.js';
import { sleep, tempDir, waitFor, webhooksFor } from '../agent/redis-fixture.js';

/**
 * Confirmed writes (`WAIT`): with a replica, a vote's record, a durable state write (the cursor's
 * checkpoint), a hook's completion and a fencing token are taken as done only once the replica has
 * them; a replica that does not answer (stopped with SIGSTOP, as a frozen or partitioned machine)
 * makes them refused as a write to a Redis that is down (a webhook 503), and they go through again
 * once it is back. On one server there is nothing to confirm on: nothing waits, unless
 * `replicas` asks for one, and then every write is refused.
 */

const opened: RedisConnection[] = [];
const agents: ListingAgent[] = [];
let prefixes = 0;
// Long enough for a replica on a loaded 2-core machine to answer WAIT; a frozen one never does.
const CONFIRM_MS = 1_000;

function connect(redis: TestRedis, options: { replicas?: number } = {}): Promise<RedisConnection> {
  const connection = createRedisConnection({ url: redis.url, prefix: `confirm-${(prefixes += 1)}:`, confirmTimeoutMs: CONFIRM_MS, reconnectDelaysMs: [50], ...options });
  opened.push(connection);
  connection.start();
  return connection.whenUp({ timeoutMs: 5_000 }).then(() => connection);
}

describe.skipIf(!programPath('redis-server'))('confirmed writes: WAIT for the replicas before a write counts', () => {
  let primary: TestRedis;
  let replica: TestRedis;
  const { freeze, thaw } = freezer(() => replica);
  beforeAll(async () => {
    primary = await startTestRedis();
    replica = await startTestRedis({ args: ['--replicaof', '127.0.0.1', String(primary.port)] });
    await waitFor('the replica in sync', async () => (await replica.command('INFO', 'replication')).includes('master_link_status:up'), 10_000);
  });
  afterAll(async () => {
    thaw();
    await replica?.close();
    await primary?.close();
  });
  afterEach(async () => {
    thaw();
    await Promise.all(agents.splice(0).map((agent) => agent.stop({ deadlineMs: 3_000 })));
    await Promise.all(opened.splice(0).map((connection) => connection.close()));
  });

  it('confirms on the replica by default, and refuses what it cannot confirm: votes, durable state writes, a lease', { timeout: 20_000 }, async () => {
    const connection = await connect(primary);
    await connection.confirm('a test write');
    const ledger = createRedisVoteLedger({ connection, agentId: 'a', leaseMs: 2_000, keepKeysForMs: 60_000 });
    await ledger.open();
    const store = createRedisStore({ connection });
    await store.open();
    const first = voteAt('1', Date.now() - 1_000);
    expect(await ledger.recordPending([first])).toHaveLength(1);
    await store.set('votes:cursor:1', { cursor: 'a' }, { durable: true });

    freeze();
    const second = voteAt('2', Date.now() - 1_000);
    const refused = await ledger.recordPending([second]).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(RedisUnavailableError);
    expect((refused as Error).message).toMatch(new RegExp(`not confirmed on 1 replica within ${CONFIRM_MS} ms \\(0 confirmed\\): a failover could take it back`));
    // A durable write (the checkpoint) is refused; one that may be lost is not waited for.
    await expect(store.set('votes:cursor:1', { cursor: 'b' }, { durable: true })).rejects.toThrow(/state key "votes:cursor:1" is not confirmed/);
    await store.set('agent:lastRun:a', { at: 1 });
    // No lease on a token that is not confirmed: it could be handed out again after a failover.
    const leadership = createRedisLeadership({ connection, agentId: 'a', leaseMs: 2_000 });
    leadership.start();
    await sleep(CONFIRM_MS + 500);
    expect(leadership.isLeader).toBe(false);

    thaw();
    await waitFor('the lease once the replica confirms', () => leadership.isLeader, 5_000);
    // The vote refused is in Redis: its retry is a duplicate, confirmed now, and its hooks are
    // the sweep's (it claims this agent's own uncertain votes).
    expect(await ledger.recordPending([second])).toEqual([]);
    await leadership.stop();
    await ledger.close();
  });

  it('waits for nothing on one server, unless replicas asks for one: then nothing is taken', async () => {
    const single = await startTestRedis();
    try {
      const auto = await connect(single);
      const started = performance.now();
      await auto.confirm('a write');
      expect(performance.now() - started).toBeLessThan(200);
      const strict = await connect(single, { replicas: 1 });
      await expect(strict.confirm('a write')).rejects.toThrow(`not confirmed on 1 replica within ${CONFIRM_MS} ms (0 confirmed)`);
    } finally {
      await single.close();
    }
  });

  it('an agent answers webhook votes 503 while the replica cannot confirm them, and rewards each once when it can', { timeout: 40_000 }, async () => {
    const emu = await startTestEmulator({ settings: { allowHttpLoopback: true, deliveryRetryDelaysMs: [300, 600, 1_000, 1_500, 2_000, 3_000] } });
    const fx = setupBot(emu);
    const voters = Array.from({ length: 4 }, (_, i) => emu.admin.createUser({ username: `voter${i}` }));
    const hook = await startVoteHookServer();
    const { ports, secrets } = await webhooksFor(emu, fx, 1);
    const agent = createListingAgent({
      config: {
        service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 },
        state: { directory: await tempDir('la-confirm-'), redis: { url: primary.url, lease: '2s', agentId: 'c', prefix: `confirm-agent-${(prefixes += 1)}:`, confirmTimeout: `${CONFIRM_MS}ms` } },
        health: { listen: '127.0.0.1:0' },
        votes: { enabled: true, pollInterval: '1h', lookback: '1h', hooks: [{ url: `${hook.url}/c`, name: 'reward', retries: 10 }] },
        webhooks: { enabled: true, listen: `127.0.0.1:${ports[0]}`, secrets },
      },
      reconnectDelaysMs: [200],
    });
    agent.on('error', () => undefined);
    agents.push(agent);
    await agent.start();
    await waitFor('the lead', () => agent.leadership!.isLeader, 10_000);
    const cast: string[] = [];
    const castVote = () => {
      const vote = emu.admin.castVote({ project_id: fx.projectId, user_id: voters[cast.length % voters.length]!.id, created_at: new Date(Date.now() - 1_000 + cast.length).toISOString() });
      cast.push(voteKey(vote.user_id, vote.created_at));
    };
    castVote();
    await waitFor('the first vote rewarded', () => hook.calls.length === 1);
    freeze();
    const frozenAt = Date.now();
    castVote();
    castVote();
    // Frozen until the service has an answer to a delivery sent since (the receiver's deadline, or
    // the refused confirmation, whichever comes first on this machine).
    const answeredSinceFrozen = () =>
      emu.admin.deliveries(fx.projectId).some((d) => d.attempts.some((a) => Date.parse(a.at) > frozenAt && a.status !== null));
    await waitFor('a delivery answered while the replica is frozen', answeredSinceFrozen, 15_000);
    // /readyz says so while the writes are refused, and is ready again once the replica has them.
    const readyz = () => call(`${agent.healthServerUrl}/readyz`);
    await waitFor('not ready while writes are refused', async () => (await readyz()).status === 503, 10_000);
    const refusing = { ready: false, detail: expect.stringContaining('writes not confirmed on 1 replica') };
    expect((await readyz()).body.components.redis).toMatchObject(refusing);
    const thawedAt = Date.now();
    thaw();
    await waitFor('every vote rewarded', () => new Set(hook.calls.map((c) => c.key)).size === cast.length, 20_000);
    await waitFor('ready again', async () => (await readyz()).status === 200, 10_000);
    await emu.admin.idle();
    const attempts = emu.admin.deliveries(fx.projectId).flatMap((d) => d.attempts);
    // The attempts answered before the thaw (one still waiting then may be confirmed after it).
    const whileFrozen = attempts.filter((a) => Date.parse(a.at) > frozenAt && Date.parse(a.at) + a.duration_ms < thawedAt);
    expect(whileFrozen.length).toBeGreaterThan(0);
    expect(whileFrozen.filter((a) => a.status !== null && a.status < 300)).toEqual([]);
    expect(whileFrozen.some((a) => a.status === 503)).toBe(true);
    expect([...hook.counts()].filter(([, n]) => n > 1)).toEqual([]);
  });

  it('a leader that finds another server behind its endpoint (a failover) renews at once: kept when the lease is there, given up when lost', { timeout: 20_000 }, async () => {
    const endpoint = await startTcpEndpoint(primary.port);
    const connection = createRedisConnection({ url: endpoint.url, prefix: `confirm-${(prefixes += 1)}:`, confirmTimeoutMs: CONFIRM_MS, reconnectDelaysMs: [50] });
    opened.push(connection);
    connection.start();
    await connection.whenUp({ timeoutMs: 5_000 });
    const leadership = createRedisLeadership({ connection, agentId: 'a', leaseMs: 30_000 });
    const changes: boolean[] = [];
    leadership.on('change', (leading) => changes.push(leading));
    leadership.start();
    try {
      await waitFor('the lease', () => leadership.isLeader, 5_000);
      const first = leadership.fencingToken!;
      // A failover whose new primary lost the lease (a write it never had): the replica becomes the
      // primary without it, the old primary its replica, and the endpoint moves. The lease is 30 s:
      // only the renewal the changed server sets off can tell.
      await replica.command('REPLICAOF', 'NO', 'ONE');
      await replica.command('DEL', connection.key('leader'));
      await primary.command('REPLICAOF', '127.0.0.1', String(replica.port));
      endpoint.move(replica.port, { dropOpen: true });
      await waitFor('a step down, and the lease taken again', () => changes.length >= 3 && leadership.isLeader, 10_000);
      expect(changes.slice(0, 3)).toEqual([true, false, true]);
      // The counter was confirmed on the replica: the new token is larger, never the same one again.
      expect(leadership.fencingToken).toBeGreaterThan(first);
    } finally {
      await leadership.stop();
      await endpoint.close();
      await primary.command('REPLICAOF', 'NO', 'ONE');
      await replica.command('REPLICAOF', '127.0.0.1', String(primary.port));
      await waitFor('the replica in sync again', async () => (await replica.command('INFO', 'replication')).includes('master_link_status:up'), 10_000);
    }
  });

  it('refuses a write whose connection moved to another server before its WAIT: the new one\'s replicas say nothing of it', async () => {
    const other = await startTestRedis();
    const endpoint = await startTcpEndpoint(primary.port);
    const connection = createRedisConnection({ url: endpoint.url, prefix: `confirm-${(prefixes += 1)}:`, confirmTimeoutMs: CONFIRM_MS, reconnectDelaysMs: [50] });
    opened.push(connection);
    try {
      connection.start();
      await connection.whenUp({ timeoutMs: 5_000 });
      const on = connection.server;
      await connection.client.set(connection.key('written'), '1');
      // Between the write and its WAIT, the endpoint leads somewhere else (a failover, seen late).
      endpoint.move(other.port, { dropOpen: true });
      await waitFor('the connection on the other server', () => connection.isUp && connection.serverChangedSince(on), 10_000);
      await expect(connection.confirm('the record of 1 vote(s)', { on })).rejects.toThrow(
        new RedisUnavailableError(
          'Redis: the record of 1 vote(s) is not confirmed: the connection is on another server since the write (a failover?), ' +
            'where it may not be, so it is refused',
        ),
      );
      // A write made there is confirmed as any: that server has no replica to wait for.
      await connection.confirm('a write on the other server', { on: connection.server });
    } finally {
      await endpoint.close();
      await other.close();
    }
  });
});
