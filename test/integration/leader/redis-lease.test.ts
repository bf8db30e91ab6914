import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createRedisLeadership, type RedisLeadership } from '../../../src/leader/redis-lease.js';
import { type RedisConnection } from '../../../src/redis/connection.js';
import { connectTestRedis, startTestRedis, type TestRedis } from '../../helpers/redis.js';
import { programPath } from '../../setup/provided.js';

const LEASE = 2_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(!programPath('redis-server'))('the leader lease in Redis', () => {
  let redis: TestRedis;
  const connections: RedisConnection[] = [];
  const leaderships: RedisLeadership[] = [];

  beforeAll(async () => {
    redis = await startTestRedis();
  });
  afterEach(async () => {
    await Promise.all(leaderships.splice(0).map((l) => l.stop()));
    await Promise.all(connections.splice(0).map((c) => c.close()));
    await redis.command('FLUSHALL');
  });
  afterAll(async () => {
    await redis?.close();
  });

  /** One agent's connection and leadership (a connection each, as separate processes have). */
  async function agent(agentId: string): Promise<{ connection: RedisConnection; leadership: RedisLeadership; changes: boolean[] }> {
    const connection = await connectTestRedis(redis, 'lease-test:');
    connections.push(connection);
    const leadership = createRedisLeadership({ connection, agentId, leaseMs: LEASE });
    leaderships.push(leadership);
    const changes: boolean[] = [];
    leadership.on('change', (leading) => changes.push(leading));
    return { connection, leadership, changes };
  }

  const leadersAmong = (all: RedisLeadership[]) => all.filter((l) => l.isLeader).map((l) => l.agentId);

  it('one of two leads; the other sees who; a graceful stop hands over at once', async () => {
    const a = await agent('a');
    const b = await agent('b');
    a.leadership.start();
    await expect.poll(() => a.leadership.isLeader).toBe(true);
    b.leadership.start();
    await expect.poll(() => b.leadership.leaderId).toBe('a');
    expect(b.leadership.isLeader).toBe(false);
    expect(b.leadership.fencingToken).toBeUndefined();
    const firstToken = a.leadership.fencingToken!;
    expect(await redis.command('GET', 'lease-test:leader')).toContain(`a|${firstToken}`);

    // A few renewal periods: still a, and only a.
    for (let i = 0; i < 6; i += 1) {
      await sleep(250);
      expect(leadersAmong([a.leadership, b.leadership])).toEqual(['a']);
    }
    expect(a.leadership.fencingToken).toBe(firstToken);

    const stoppedAt = Date.now();
    await a.leadership.stop();
    expect(a.changes).toEqual([true, false]);
    await expect.poll(() => b.leadership.isLeader, { timeout: LEASE, interval: 5 }).toBe(true);
    const handover = Date.now() - stoppedAt;
    // b tries every lease / 5, and the key is gone at once.
    expect(handover).toBeLessThan(LEASE / 5 + 300);
    expect(b.leadership.fencingToken).toBeGreaterThan(firstToken);
    expect(b.leadership.leaderId).toBe('b');
    console.log(`lease: graceful handover in ${handover} ms (lease ${LEASE} ms)`);
  });

  it('a leader that dies (stops renewing, never releases) is replaced within lease + lease / 5, under a larger token', async () => {
    const a = await agent('a');
    a.leadership.start();
    await expect.poll(() => a.leadership.isLeader).toBe(true);
    const b = await agent('b');
    const c = await agent('c');
    b.leadership.start();
    c.leadership.start();
    await expect.poll(() => b.leadership.leaderId).toBe('a');
    const firstToken = a.leadership.fencingToken!;

    // "Kill" a: its connection is cut, so it can neither renew nor release.
    const connectionA = a.connection;
    a.connection.client.destroy();
    const killedAt = Date.now();
    // By its own clock it stops believing it leads before Redis lets the key expire.
    await expect.poll(() => a.leadership.isLeader, { timeout: LEASE, interval: 5 }).toBe(false);
    const believedFor = Date.now() - killedAt;
    await expect.poll(() => leadersAmong([b.leadership, c.leadership]).length, { timeout: LEASE * 2, interval: 5 }).toBe(1);
    const takeover = Date.now() - killedAt;
    expect(takeover).toBeLessThanOrEqual(LEASE + LEASE / 5 + 100);
    const [winner] = [b.leadership, c.leadership].filter((l) => l.isLeader);
    expect(winner!.fencingToken).toBeGreaterThan(firstToken);
    // The other standby sees the new leader.
    const other = winner === b.leadership ? c.leadership : b.leadership;
    await expect.poll(() => other.leaderId).toBe(winner!.agentId);
    expect(believedFor).toBeLessThan(takeover);
    console.log(`lease: a dead leader stopped believing after ${believedFor} ms, was replaced after ${takeover} ms (lease ${LEASE} ms)`);
    void connectionA;
  });

  it('look() names the holder before the first try, and start() keeps it; no holder: none; no Redis: false', async () => {
    const a = await agent('a');
    const b = await agent('b');
    expect(await b.leadership.look()).toBe(true);
    expect(b.leadership.leaderId).toBeUndefined();
    a.leadership.start();
    await expect.poll(() => a.leadership.isLeader).toBe(true);

    const seen: (string | undefined)[] = [];
    b.leadership.on('leader', (id) => seen.push(id));
    expect(await b.leadership.look()).toBe(true);
    expect(b.leadership.leaderId).toBe('a');
    expect(seen).toEqual(['a']);
    // Its first try is in flight now: what it read stays until that answers (the same holder: no event).
    b.leadership.start();
    expect(b.leadership.leaderId).toBe('a');
    await sleep(LEASE / 5 + 100);
    expect(b.leadership.leaderId).toBe('a');
    expect(seen).toEqual(['a']);
    expect(b.leadership.isLeader).toBe(false);

    await b.connection.close();
    expect(await b.leadership.look()).toBe(false);
    expect(b.leadership.leaderId).toBe('a');
  });

  it('never two leaders at once while three agents compete, start and stop', async () => {
    const all = await Promise.all(['x', 'y', 'z'].map((id) => agent(id)));
    const tokens = new Set<number>();
    for (const { leadership } of all) leadership.start();
    const until = Date.now() + 3_000;
    let round = 0;
    while (Date.now() < until) {
      const leaders = all.filter(({ leadership }) => leadership.isLeader);
      expect(leaders.length).toBeLessThanOrEqual(1);
      for (const { leadership } of leaders) tokens.add(leadership.fencingToken!);
      await sleep(20);
      round += 1;
      // Stop the leader now and then; the next takes over under a new token.
      if (round % 40 === 0 && leaders[0]) await leaders[0].leadership.stop();
    }
    expect(tokens.size).toBeGreaterThanOrEqual(2);
    const sorted = [...tokens].sort((p, q) => p - q);
    expect(sorted).toEqual([...tokens]);
  });

  it('stands by while Redis is down and leads again when it returns', async () => {
    const a = await agent('a');
    a.leadership.start();
    await expect.poll(() => a.leadership.isLeader).toBe(true);
    const before = a.leadership.fencingToken!;
    await redis.stop();
    try {
      await expect.poll(() => a.leadership.isLeader, { timeout: LEASE * 2, interval: 10 }).toBe(false);
      // isLeader turns false at the deadline itself; the event follows on the step-down timer.
      await expect.poll(() => a.changes, { timeout: 500, interval: 5 }).toEqual([true, false]);
    } finally {
      await redis.start();
    }
    await expect.poll(() => a.leadership.isLeader, { timeout: 10_000, interval: 20 }).toBe(true);
    // A new lease: a new token (the counter survived the restart in the append-only file).
    expect(a.leadership.fencingToken).toBeGreaterThan(before);
    expect(a.changes).toEqual([true, false, true]);
  });

  it('starts again after a stop (and after a stop still under way), releasing and taking the lease anew', async () => {
    const a = await agent('a');
    a.leadership.start();
    await expect.poll(() => a.leadership.isLeader).toBe(true);
    const first = a.leadership.fencingToken!;
    await a.leadership.stop();
    expect(await redis.command('EXISTS', 'lease-test:leader')).toBe(':0');
    a.leadership.start();
    await expect.poll(() => a.leadership.isLeader).toBe(true);
    const second = a.leadership.fencingToken!;
    expect(second).toBeGreaterThan(first);
    // start() while the stop runs: once the lease is released, it is taken again under a new token.
    const stopping = a.leadership.stop();
    a.leadership.start();
    await stopping;
    await expect.poll(() => a.leadership.isLeader).toBe(true);
    expect(a.leadership.fencingToken).toBeGreaterThan(second);
    // stop, start, stop: the last call wins.
    const again = a.leadership.stop();
    a.leadership.start();
    await a.leadership.stop();
    await again;
    await sleep(LEASE / 2);
    expect(a.leadership.isLeader).toBe(false);
    expect(await redis.command('EXISTS', 'lease-test:leader')).toBe(':0');
    expect(a.changes).toEqual([true, false, true, false, true, false]);
  });
});
