import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentLogger } from '../../../src/log/agent-logger.js';
import { silentLogger } from '../../../src/log/agent-logger.js';
import { createRedisConnection, type RedisConnection } from '../../../src/redis/connection.js';
import { createRedisVoteLedger, type RedisVoteLedgerOptions } from '../../../src/votes/ledger-redis.js';
import { createVotePipeline } from '../../../src/votes/pipeline.js';
import type { Vote, VoteHook, VoteLedger } from '../../../src/votes/types.js';
import { startTestRedis, type TestRedis } from '../../helpers/redis.js';
import { startTcpEndpoint, type TcpEndpoint } from '../../helpers/tcp-endpoint.js';
import { programPath } from '../../setup/provided.js';
import { HOUR, makeVote, T0 } from '../../unit/votes/votes-fixtures.js';

/**
 * Issue 35 item 4, the frozen agent: an agent whose hook call was in flight when it froze (a paused
 * VM, SIGSTOP), past its lease. Another agent's sweep takes the vote over and runs it: a repeat of
 * the call in flight, allowed. Thawed, the frozen agent's call times out; its retry must not be a
 * third reward. Agent A reaches Redis through a TCP endpoint that `hold()`s every byte, which is
 * how a frozen agent looks from Redis (its heartbeat stops); its first hook call waits on a gate.
 */

const withoutRedis = !programPath('redis-server');

let redis: TestRedis;
const opened: RedisConnection[] = [];
const endpoints: TcpEndpoint[] = [];

beforeAll(async () => {
  redis = await startTestRedis();
});
afterAll(async () => {
  await Promise.all(opened.map((connection) => connection.close()));
  await Promise.all(endpoints.map((endpoint) => endpoint.close()));
  await redis?.close();
});

async function connect(url: string, prefix: string): Promise<RedisConnection> {
  const connection = createRedisConnection({ url, prefix, reconnectDelaysMs: [50] });
  opened.push(connection);
  connection.start();
  await connection.whenUp({ timeoutMs: 5_000 });
  return connection;
}

/** Agent A's connection, through an endpoint the test can hold (A frozen, as Redis sees it). */
async function frozenable(prefix: string) {
  const endpoint = await startTcpEndpoint(redis.port);
  endpoints.push(endpoint);
  return { endpoint, connection: await connect(endpoint.url, prefix) };
}

const ledgerOn = (connection: RedisConnection, agentId: string, extra: Partial<RedisVoteLedgerOptions> = {}) =>
  createRedisVoteLedger({ connection, agentId, leaseMs: 300, keepKeysForMs: HOUR, now: Date.now, ...extra });

/** A logger keeping its `info` lines. */
function keptLogger(): AgentLogger & { lines: string[] } {
  const lines: string[] = [];
  return { ...silentLogger, lines, info: (_fields: object | string, message?: string) => void lines.push(message ?? '') };
}

/**
 * The hook of agent `agent`, writing each call to `calls`; with `gate`, its first call waits for
 * it (and fails when it rejects: the thawed call timing out).
 */
function rewardHook(agent: string, calls: string[], gate?: Promise<void>): VoteHook {
  let made = 0;
  return {
    name: 'pay',
    retries: 3,
    async run(vote) {
      calls.push(`${agent} ${vote.key}`);
      made += 1;
      if (made === 1 && gate !== undefined) await gate;
    },
  };
}

const pipelineOf = (ledger: VoteLedger, hook: VoteHook, logger: AgentLogger = silentLogger) =>
  // A retry 10 ms after a failure (random 0.5 of 20 ms): the test waits for no backoff.
  createVotePipeline({ ledger, hooks: [hook], logger, now: Date.now, backoff: { baseMs: 20, maxMs: 20 }, random: () => 0.5 });

/** A gate the test fails at will. */
function failingGate() {
  let fail: (error: Error) => void = () => undefined;
  const gate = new Promise<void>((_, reject) => (fail = reject));
  return { gate, fail };
}

/** A vote cast now (the records of finished votes then live on for the test's checks). */
const freshVote = (user: number): Vote => makeVote(user, Date.now() - T0);

describe.skipIf(withoutRedis)('a hook retry of an agent frozen past its lease with the call in flight', () => {
  it('is let go once another agent took the vote over and rewarded it: two calls, not three', async () => {
    const { endpoint, connection: connA } = await frozenable('holds1:');
    const connB = await connect(redis.url, 'holds1:');
    const calls: string[] = [];
    const { gate, fail } = failingGate();
    const logger = keptLogger();
    const a = ledgerOn(connA, 'agent-a');
    const b = ledgerOn(connB, 'agent-b');
    const pipelineA = pipelineOf(a, rewardHook('a', calls, gate), logger);
    const pipelineB = pipelineOf(b, rewardHook('b', calls));
    await Promise.all([pipelineA.start(), pipelineB.start()]);

    const vote = freshVote(1);
    expect((await pipelineA.ingest([vote], 'webhook')).accepted).toHaveLength(1);
    await expect.poll(() => calls).toEqual([`a ${vote.key}`]);
    endpoint.hold(); // A freezes with its call in flight: its heartbeat (300 ms) stops
    await expect.poll(() => calls, { timeout: 5_000, interval: 20 }).toEqual([`a ${vote.key}`, `b ${vote.key}`]);
    await pipelineB.idle();
    expect(await connB.client.sendCommand(['HGET', connB.key('vote', vote.key), 'c'])).toBe('1');

    endpoint.release(); // thawed: its call times out, and its retry timer fires
    fail(new Error('the hook timed out after 5000 ms'));
    await pipelineA.idle();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(calls).toEqual([`a ${vote.key}`, `b ${vote.key}`]);
    expect(logger.lines.filter((line) => line.startsWith('vote hook not retried: another agent took the vote over'))).toHaveLength(1);
    // A wrote nothing of its own: no dead letter, and B's finish stands.
    expect(await pipelineA.failed()).toEqual([]);
    expect(await connB.client.sendCommand(['HGET', connB.key('votes', 'pending'), vote.key])).toBeNull();
    expect(pipelineA.stats()).toMatchObject({ votes: 0, retrying: 0 });

    await Promise.all([pipelineA.stop(Date.now() + 1_000), pipelineB.stop(Date.now() + 1_000)]);
    await Promise.all([a.close(), b.close()]);
  });

  it('is let go while the other agent still runs the vote, which finishes it', async () => {
    const { endpoint, connection: connA } = await frozenable('holds2:');
    const connB = await connect(redis.url, 'holds2:');
    const calls: string[] = [];
    const { gate, fail } = failingGate();
    const { gate: slowB, fail: failB } = failingGate();
    const a = ledgerOn(connA, 'agent-a');
    const b = ledgerOn(connB, 'agent-b');
    const pipelineA = pipelineOf(a, rewardHook('a', calls, gate));
    // B's first call fails too (after A's retry was decided): B retries it, as the vote's holder.
    const pipelineB = pipelineOf(b, rewardHook('b', calls, slowB));
    await Promise.all([pipelineA.start(), pipelineB.start()]);

    const vote = freshVote(2);
    await pipelineA.ingest([vote], 'webhook');
    await expect.poll(() => calls).toHaveLength(1);
    endpoint.hold();
    await expect.poll(() => calls, { timeout: 5_000, interval: 20 }).toHaveLength(2);
    endpoint.release();
    fail(new Error('the hook timed out after 5000 ms'));
    await pipelineA.idle();
    expect(await connB.client.sendCommand(['HGET', connB.key('votes', 'pending'), vote.key])).toBe('agent-b');
    failB(new Error('503 from the reward service'));
    await pipelineB.idle();
    expect(calls).toEqual([`a ${vote.key}`, `b ${vote.key}`, `b ${vote.key}`]);
    expect(await connB.client.sendCommand(['HGET', connB.key('vote', vote.key), 'c'])).toBe('1');

    await Promise.all([pipelineA.stop(Date.now() + 1_000), pipelineB.stop(Date.now() + 1_000)]);
    await Promise.all([a.close(), b.close()]);
  });

  it('still runs when this agent holds the vote: nothing lost', async () => {
    const { connection } = await frozenable('holds3:');
    const calls: string[] = [];
    const { gate, fail } = failingGate();
    const logger = keptLogger();
    const ledger = ledgerOn(connection, 'agent-a');
    const pipeline = pipelineOf(ledger, rewardHook('a', calls, gate), logger);
    await pipeline.start();
    const vote = freshVote(3);
    await pipeline.ingest([vote], 'webhook');
    await expect.poll(() => calls).toHaveLength(1);
    fail(new Error('503 from the reward service'));
    await pipeline.idle();
    expect(calls).toEqual([`a ${vote.key}`, `a ${vote.key}`]);
    expect(await connection.client.sendCommand(['HGET', connection.key('vote', vote.key), 'c'])).toBe('1');
    expect(logger.lines.filter((line) => line.startsWith('vote hook not retried'))).toEqual([]);
    await pipeline.stop(Date.now() + 1_000);
    await ledger.close();
  });

  it('still runs when Redis cannot say who holds the vote: nothing lost', async () => {
    // Redis takes the question and never answers (a silent network): after a lease (1 s) the retry runs.
    const { endpoint, connection } = await frozenable('holds4:');
    const calls: string[] = [];
    const { gate, fail } = failingGate();
    const ledger = ledgerOn(connection, 'agent-a', { leaseMs: 1_000 });
    const pipeline = pipelineOf(ledger, rewardHook('a', calls, gate));
    await pipeline.start();
    const vote = freshVote(4);
    await pipeline.ingest([vote], 'webhook');
    await expect.poll(() => calls).toHaveLength(1);
    endpoint.hold();
    fail(new Error('503 from the reward service'));
    await expect.poll(() => calls, { timeout: 5_000, interval: 20 }).toEqual([`a ${vote.key}`, `a ${vote.key}`]);
    endpoint.release();
    await pipeline.idle();
    expect(await connection.client.sendCommand(['HGET', connection.key('vote', vote.key), 'c'])).toBe('1');
    await pipeline.stop(Date.now() + 1_000);
    await ledger.close();
  });
});

describe.skipIf(withoutRedis)('the Redis vote ledger: holds()', () => {
  it('says whether this agent holds a vote, and renews its heartbeat in the same step when it does', async () => {
    const connA = await connect(redis.url, 'holds5:');
    const connB = await connect(redis.url, 'holds5:');
    const a = ledgerOn(connA, 'agent-a', { leaseMs: 10_000 });
    const b = ledgerOn(connB, 'agent-b', { leaseMs: 10_000 });
    await Promise.all([a.open(), b.open()]);
    const [mine, theirs, finished, lost, marked] = [freshVote(5), freshVote(6), freshVote(7), freshVote(8), freshVote(9)];
    await a.recordPending([mine, lost, marked]);
    await b.recordPending([theirs, finished]);
    await b.recordComplete(finished.key);
    // A record Redis lost (a failover that took back its writes): run it rather than lose it.
    await connA.client.sendCommand(['DEL', connA.key('vote', lost.key)]);
    await connA.client.sendCommand(['HDEL', connA.key('votes', 'pending'), lost.key]);
    // Marked finished by an agent that remembered it, its record lost by Redis (no hook ran there): still run.
    await connA.client.sendCommand(['HDEL', connA.key('votes', 'pending'), marked.key]);
    await connA.client.sendCommand(['HSET', connA.key('vote', marked.key), 'c', '1']);
    const answers = await Promise.all([mine, theirs, finished, lost, marked].map((vote) => a.holds(vote.key)));
    expect(answers).toEqual([true, false, false, true, true]);

    // A's heartbeat gone (frozen past its lease): holds() renews it, so no sweep takes the vote after this answer.
    await connA.client.sendCommand(['DEL', connA.key('agent', 'agent-a')]);
    expect(await a.holds(mine.key)).toBe(true);
    expect(await connA.client.sendCommand(['EXISTS', connA.key('agent', 'agent-a')])).toBe(1);
    await b.close();
    const c = ledgerOn(await connect(redis.url, 'holds5:'), 'agent-c');
    expect((await c.open()).map((entry) => entry.vote.key)).toEqual([theirs.key]); // B's, released at its close
    await Promise.all([a.close(), c.close()]);
  });
});
