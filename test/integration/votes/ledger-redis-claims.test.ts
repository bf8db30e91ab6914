import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/log/agent-logger.js';
import { createRedisConnection, type RedisConnection } from '../../../src/redis/connection.js';
import { createRedisVoteLedger } from '../../../src/votes/ledger-redis.js';
import { createVotePipeline } from '../../../src/votes/pipeline.js';
import type { VoteHook } from '../../../src/votes/types.js';
import { freezer, startTestRedis, type TestRedis } from '../../helpers/redis.js';
import { programPath } from '../../setup/provided.js';
import { HOUR, makeVote, T0 } from '../../unit/votes/votes-fixtures.js';

/**
 * The sweep's claim of a stopped agent's votes is acted on only once the replica confirmed it
 * (issue 35 item 4): a failover that took the claim back would leave the vote pending under its
 * old owner, and that one, thawed after the failover (an agent frozen past its lease), would run
 * it again beside the claimer's call. The replica is stopped (SIGSTOP) while the claim is made.
 */

const opened: RedisConnection[] = [];
let primary: TestRedis;
let replica: TestRedis;
const { freeze, thaw } = freezer(() => replica);

async function connect(prefix: string): Promise<RedisConnection> {
  const connection = createRedisConnection({ url: primary.url, prefix, confirmTimeoutMs: 1_000, reconnectDelaysMs: [50] });
  opened.push(connection);
  connection.start();
  await connection.whenUp({ timeoutMs: 5_000 });
  return connection;
}

describe.skipIf(!programPath('redis-server'))('the Redis vote ledger: a claim the replica did not confirm', () => {
  beforeAll(async () => {
    primary = await startTestRedis();
    replica = await startTestRedis({ args: ['--replicaof', '127.0.0.1', String(primary.port)] });
    for (let i = 0; i < 100 && !(await replica.command('INFO', 'replication')).includes('master_link_status:up'); i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });
  afterAll(async () => {
    thaw();
    await Promise.all(opened.map((connection) => connection.close()));
    await replica?.close();
    await primary?.close();
  });

  it('runs no claimed vote until the replica has the claim, then runs it once', { timeout: 20_000 }, async () => {
    const dying = await connect('claims1:');
    const a = createRedisVoteLedger({ connection: dying, agentId: 'agent-a', leaseMs: 300, keepKeysForMs: HOUR, now: () => T0 });
    await a.open();
    const vote = makeVote(1);
    await a.recordPending([vote]);
    const calls: string[] = [];
    const hook: VoteHook = { name: 'pay', retries: 0, run: async (v) => void calls.push(v.key) };
    const b = createRedisVoteLedger({ connection: await connect('claims1:'), agentId: 'agent-b', leaseMs: 300, keepKeysForMs: HOUR, now: Date.now });
    const pipeline = createVotePipeline({ ledger: b, hooks: [hook], logger: silentLogger, now: Date.now });
    await pipeline.start(); // A is alive: nothing of it is taken
    freeze();
    await dying.close(); // A dies with the vote pending: its heartbeat (300 ms) is not renewed
    // Several sweeps claim the vote on the primary; none is confirmed, so none runs it.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(calls).toEqual([]);
    thaw();
    await expect.poll(() => calls, { timeout: 10_000, interval: 50 }).toEqual([vote.key]);
    await pipeline.idle();
    await new Promise((resolve) => setTimeout(resolve, 700)); // more sweeps: nothing runs twice
    expect(calls).toEqual([vote.key]);
    await pipeline.stop(Date.now() + 1_000);
    await b.close();
  });

  it('leaves out of open() the orphans whose claim is not confirmed, says so, and hands them over once it is', { timeout: 20_000 }, async () => {
    const dying = await connect('claims2:');
    const a = createRedisVoteLedger({ connection: dying, agentId: 'agent-a', leaseMs: 300, keepKeysForMs: HOUR, now: () => T0 });
    await a.open();
    const [orphan, own] = [makeVote(1), makeVote(2)];
    await a.recordPending([orphan]);
    await dying.close();
    const connection = await connect('claims2:');
    const before = createRedisVoteLedger({ connection, agentId: 'agent-b', leaseMs: 300, keepKeysForMs: HOUR, now: () => T0 });
    await before.open();
    await before.recordPending([own]);
    await before[Symbol.asyncDispose](); // B restarts: its own vote is pending under it
    await new Promise((resolve) => setTimeout(resolve, 400)); // A's heartbeat (300 ms) is gone

    freeze();
    const b = createRedisVoteLedger({ connection, agentId: 'agent-b', leaseMs: 300, keepKeysForMs: HOUR, now: () => T0 });
    const recovered: string[] = [];
    b.onRecovered((entries) => recovered.push(...entries.map((entry) => entry.vote.key)));
    expect((await b.open()).map((entry) => entry.vote.key)).toEqual([own.key]);
    expect(b.warnings?.()).toEqual([expect.stringMatching(/^1 vote\(s\) left by stopped agents are run once the replicas confirm this agent's claim \(/)]);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(recovered).toEqual([]);
    thaw();
    await expect.poll(() => recovered, { timeout: 10_000, interval: 50 }).toEqual([orphan.key]);
    await b.close();
  });
});
