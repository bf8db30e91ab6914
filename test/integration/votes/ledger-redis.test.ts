import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/log/agent-logger.js';
import { createRedisConnection, RedisUnavailableError, type RedisConnection } from '../../../src/redis/connection.js';
import { createRedisVoteLedger, type RedisVoteLedgerOptions } from '../../../src/votes/ledger-redis.js';
import { createVotePipeline } from '../../../src/votes/pipeline.js';
import type { LedgerEntry, VoteHook } from '../../../src/votes/types.js';
import { startTestRedis, type TestRedis } from '../../helpers/redis.js';
import { programPath } from '../../setup/provided.js';
import { describeLedgerContract } from '../../unit/votes/ledger-contract.js';
import { HOUR, makeLetter, makeVote, T0 } from '../../unit/votes/votes-fixtures.js';

/** Without a redis-server (test/setup/ says why and how to get one), every test here is skipped. */
const withoutRedis = !programPath('redis-server');

let redis: TestRedis;
let prefixes = 0;
const opened: RedisConnection[] = [];

beforeAll(async () => {
  redis = await startTestRedis();
});
afterAll(async () => {
  await Promise.all(opened.map((connection) => connection.close()));
  await redis?.close();
});

/** A started connection; `prefix` shared by the agents of one test, fresh per test otherwise. */
async function connect(prefix = `t${++prefixes}:`): Promise<RedisConnection> {
  const connection = createRedisConnection({ url: redis.url, prefix, reconnectDelaysMs: [50] });
  opened.push(connection);
  connection.start();
  await connection.whenUp({ timeoutMs: 5_000 });
  return connection;
}

/** A ledger on `connection`; the votes' clock is at T0 unless told (their TTL is counted from it). */
function ledgerOn(connection: RedisConnection, agentId: string, extra: Partial<RedisVoteLedgerOptions> = {}) {
  return createRedisVoteLedger({ connection, agentId, leaseMs: 300, keepKeysForMs: HOUR, now: () => T0, ...extra });
}

describe.skipIf(withoutRedis)('on a redis-server', () => {
  describeLedgerContract('redis', async ({ keepKeysForMs }) => {
    const connection = await connect();
    // The contract's clock: compact(t) is the agent's clock reaching t (the pipeline passes now()).
    const make = () => createRedisVoteLedger({ connection, agentId: 'contract', leaseMs: 10_000, keepKeysForMs, now: () => T0 });
    let ledger = make();
    return {
      ledger,
      async reopen() {
        await ledger.close();
        ledger = make();
        return ledger;
      },
      cleanup: () => connection.close(),
    };
  });
});

const votes = (count: number, from = 0) => Array.from({ length: count }, (_, i) => makeVote(from + i));

/** A hook that counts its calls per vote key, and can be held on a gate. */
function countingHook(name: string, calls: Map<string, number>, gate?: () => Promise<void>): VoteHook {
  return {
    name,
    retries: 0,
    async run(vote) {
      await gate?.();
      calls.set(`${name} ${vote.key}`, (calls.get(`${name} ${vote.key}`) ?? 0) + 1);
    },
  };
}

describe.skipIf(withoutRedis)('the Redis vote ledger across agents', () => {
  it('gives each vote to exactly one of two agents recording the same votes at once', async () => {
    const [a, b] = [ledgerOn(await connect('same1:'), 'agent-a'), ledgerOn(await connect('same1:'), 'agent-b')];
    await Promise.all([a.open(), b.open()]);
    const all = votes(200);
    const batches = (offset: number) => Array.from({ length: 10 }, (_, i) => all.slice(((i + offset) % 10) * 20, ((i + offset) % 10) * 20 + 20));
    const results = await Promise.all([...batches(0).map((batch) => a.recordPending(batch)), ...batches(5).map((batch) => b.recordPending([...batch].reverse()))]);
    const accepted = results.flat().map((vote) => vote.key);
    expect(accepted).toHaveLength(200);
    expect(new Set(accepted).size).toBe(200);
    // Both know every key now: neither records any again.
    expect(all.every((vote) => a.has(vote.key) && b.has(vote.key))).toBe(true);
    expect(await a.recordPending(all)).toEqual([]);
    expect(a.stats()).toMatchObject({ keys: 200, pending: 200 });
    await Promise.all([a.close(), b.close()]);
  });

  it('hands the pending votes of an agent whose heartbeat stopped to exactly one other agent, with the hooks done so far', async () => {
    const dying = await connect('orphans1:');
    const a = ledgerOn(dying, 'agent-a');
    await a.open();
    const pending = votes(30);
    await a.recordPending(pending);
    await a.recordHookDone(pending[0]!.key, 'exec');
    await a.recordComplete(pending[29]!.key);

    const [b, c] = [ledgerOn(await connect('orphans1:'), 'agent-b'), ledgerOn(await connect('orphans1:'), 'agent-c')];
    const recovered: Record<string, LedgerEntry[]> = { b: [], c: [] };
    b.onRecovered((entries) => recovered.b!.push(...entries));
    c.onRecovered((entries) => recovered.c!.push(...entries));
    // Agent A is alive: nothing of it is taken.
    expect(await b.open()).toEqual([]);
    expect(await c.open()).toEqual([]);

    // A dies without a word: its connection drops, its heartbeat (300 ms) is not renewed.
    await dying.close();
    await expect.poll(() => recovered.b!.length + recovered.c!.length, { timeout: 3_000, interval: 50 }).toBe(29);
    await new Promise((resolve) => setTimeout(resolve, 400)); // more sweeps: nothing is taken twice
    const keys = [...recovered.b!, ...recovered.c!].map((entry) => entry.vote.key);
    expect(keys.sort()).toEqual(pending.slice(0, 29).map((vote) => vote.key).sort());
    const first = [...recovered.b!, ...recovered.c!].find((entry) => entry.vote.key === pending[0]!.key);
    expect(first).toEqual({ vote: pending[0], done: ['exec'], complete: false, deadLettered: [] });

    // They are the taker's now: its restart (same agent ID) finds them.
    const taker = recovered.b!.length > 0 ? b : c;
    const takerCount = taker === b ? recovered.b!.length : recovered.c!.length;
    await taker.close();
    const again = ledgerOn(await connect('orphans1:'), taker === b ? 'agent-b' : 'agent-c');
    expect(await again.open()).toHaveLength(takerCount);
    await Promise.all([again.close(), (taker === b ? c : b).close()]);
  });

  it('with adoptOrphans false (a short-lived replay) leaves a dead agent\'s votes to the agents that adopt them', async () => {
    const dying = await connect('orphans2:');
    const a = ledgerOn(dying, 'agent-a');
    await a.open();
    const pending = votes(5);
    await a.recordPending(pending);
    await dying.close();
    await new Promise((resolve) => setTimeout(resolve, 400)); // A's heartbeat (300 ms) is gone

    const replay = ledgerOn(await connect('orphans2:'), 'votes-retry', { adoptOrphans: false });
    const seenByReplay: LedgerEntry[] = [];
    replay.onRecovered((entries) => seenByReplay.push(...entries));
    expect(await replay.open()).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 400)); // a sweep or more
    expect(seenByReplay).toEqual([]);
    await replay.close();

    const agent = ledgerOn(await connect('orphans2:'), 'agent-b');
    expect((await agent.open()).map((entry) => entry.vote.key).sort()).toEqual(pending.map((vote) => vote.key).sort());
    await agent.close();
  });

  it('runs each hook once per vote when two agents with a pipeline each get the same votes', async () => {
    const calls = new Map<string, number>();
    const hooks = [countingHook('pay', calls), countingHook('log', calls)];
    const ledgers = [ledgerOn(await connect('pipes1:'), 'agent-a', { now: Date.now }), ledgerOn(await connect('pipes1:'), 'agent-b', { now: Date.now })];
    const pipelines = ledgers.map((ledger) => createVotePipeline({ ledger, hooks, logger: silentLogger, now: Date.now }));
    await Promise.all(pipelines.map((pipeline) => pipeline.start()));
    const all = votes(60, 1_000);
    const results = await Promise.all([
      ...[0, 20, 40].map((from) => pipelines[0]!.ingest(all.slice(from, from + 20), 'poll')),
      ...[40, 20, 0].map((from) => pipelines[1]!.ingest(all.slice(from, from + 20), 'webhook')),
    ]);
    expect(results.reduce((sum, result) => sum + result.accepted.length, 0)).toBe(60);
    await Promise.all(pipelines.map((pipeline) => pipeline.idle()));
    expect(calls.size).toBe(120);
    expect([...calls.values()].every((count) => count === 1)).toBe(true);
    await Promise.all(pipelines.map((pipeline) => pipeline.stop(Date.now() + 1_000)));
    // stats() are the counts of this ledger's last operation: the other agent may have finished
    // the last vote after it. A compact at time 0 forgets nothing and reads the counts afresh.
    await ledgers[0]!.compact(0);
    expect(ledgers[0]!.stats().pending).toBe(0);
    await Promise.all(ledgers.map((ledger) => ledger.close()));
  });

  it('runs the votes of an agent that died mid-hook on another agent’s pipeline, once', async () => {
    const calls = new Map<string, number>();
    const never = new Promise<void>(() => undefined);
    const dying = await connect('pipes2:');
    const a = ledgerOn(dying, 'agent-a', { now: Date.now, closeTimeoutMs: 50 });
    const stuck = createVotePipeline({ ledger: a, hooks: [countingHook('pay', new Map(), () => never)], logger: silentLogger, now: Date.now });
    await stuck.start();
    const b = ledgerOn(await connect('pipes2:'), 'agent-b', { now: Date.now });
    const survivor = createVotePipeline({ ledger: b, hooks: [countingHook('pay', calls)], logger: silentLogger, now: Date.now });
    await survivor.start();

    const all = votes(10, 2_000);
    expect((await stuck.ingest(all, 'webhook')).accepted).toHaveLength(10);
    expect((await survivor.ingest(all, 'webhook')).accepted).toHaveLength(0);
    await dying.close(); // A is gone mid-hook
    await expect.poll(() => calls.size, { timeout: 3_000, interval: 50 }).toBe(10);
    await survivor.idle();
    expect([...calls.values()].every((count) => count === 1)).toBe(true);
    expect(b.stats().pending).toBe(0);
    await survivor.stop(Date.now() + 1_000);
    await b.close();
    await stuck.stop(Date.now());
    await a.close().catch(() => undefined);
  });
});

describe.skipIf(withoutRedis)('the Redis vote ledger when a reply is lost', () => {
  it('runs a vote whose recording reply was lost (it is pending under this agent) once, through the sweep', async () => {
    const connection = await connect('lost1:');
    let loseReply = false;
    // The script runs in Redis, then the reply never arrives (a command timeout).
    const flaky = new Proxy(connection, {
      get(target, property) {
        if (property === 'script') {
          return (source: string) => {
            const script = target.script(source);
            return {
              async run(keys: readonly string[], args: readonly (string | number)[]) {
                const reply = await script.run(keys, args);
                if (loseReply) {
                  loseReply = false;
                  throw new Error('Command timeout');
                }
                return reply;
              },
            };
          };
        }
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    const calls = new Map<string, number>();
    const a = ledgerOn(flaky, 'agent-a', { now: Date.now });
    const pipelineA = createVotePipeline({ ledger: a, hooks: [countingHook('pay', calls)], logger: silentLogger, now: Date.now });
    const b = ledgerOn(await connect('lost1:'), 'agent-b', { now: Date.now });
    const pipelineB = createVotePipeline({ ledger: b, hooks: [countingHook('pay', calls)], logger: silentLogger, now: Date.now });
    await Promise.all([pipelineA.start(), pipelineB.start()]);

    // Cast in 2024: past its forget-at when it finishes, it is still kept keepKeysFor from then.
    const vote = makeVote(77, 4_000);
    loseReply = true;
    await expect(pipelineA.ingest([vote], 'webhook')).rejects.toBeInstanceOf(RedisUnavailableError);
    // The service retries on the other agent: a duplicate there, and A's sweep runs it.
    expect((await pipelineB.ingest([vote], 'webhook')).accepted).toEqual([]);
    await expect.poll(() => calls.get(`pay ${vote.key}`), { timeout: 3_000, interval: 50 }).toBe(1);
    // A retry to A itself later is a plain duplicate too.
    expect((await pipelineA.ingest([vote], 'webhook')).accepted).toEqual([]);
    await Promise.all([pipelineA.idle(), pipelineB.idle()]);
    await new Promise((resolve) => setTimeout(resolve, 350));
    expect(calls.get(`pay ${vote.key}`)).toBe(1);
    await Promise.all([pipelineA.stop(Date.now() + 1_000), pipelineB.stop(Date.now() + 1_000)]);
    await Promise.all([a.close(), b.close()]);
  });
});

describe.skipIf(withoutRedis)('the Redis vote ledger while Redis is down', () => {
  it('refuses new votes with a RedisUnavailableError, queues hook results, writes them after the restart, and re-runs nothing', async () => {
    const connection = await connect();
    const calls = new Map<string, number>();
    let open: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const ledger = ledgerOn(connection, 'agent-a', { now: Date.now, leaseMs: 10_000 });
    const hooks = [countingHook('pay', calls, () => gate), countingHook('log', calls, () => gate)];
    const pipeline = createVotePipeline({ ledger, hooks, logger: silentLogger, now: Date.now });
    await pipeline.start();
    // Cast now: with this test's real clock their records live on after they finish.
    const all = Array.from({ length: 5 }, (_, i) => makeVote(3_000 + i, Date.now() - T0));
    await pipeline.ingest(all, 'poll');

    await redis.stop();
    await expect.poll(() => connection.isUp).toBe(false);
    const started = Date.now();
    const refused = await pipeline.ingest([makeVote(99)], 'webhook').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(RedisUnavailableError);
    expect((refused as Error).message).toMatch(/^Redis: could not record 1 vote\(s\) as pending: /);
    expect(Date.now() - started).toBeLessThan(1_000);

    open(); // the hooks succeed while Redis is away: their results wait in the queue
    await expect.poll(() => calls.size).toBe(10);
    const idle = pipeline.idle().then(() => 'idle');
    expect(await Promise.race([idle, new Promise((resolve) => setTimeout(() => resolve('waiting'), 200))])).toBe('waiting');
    expect(pipeline.stats().votes).toBe(5); // not finished: no hook result is written yet

    await redis.start();
    await connection.whenUp({ timeoutMs: 10_000 });
    await pipeline.idle();
    expect(ledger.stats().pending).toBe(0);
    const record = await connection.client.hGetAll(connection.key('vote', all[0]!.key));
    expect(record).toMatchObject({ c: '1' });
    await pipeline.stop(Date.now() + 1_000);
    await ledger.close();

    // A restart of this agent (same ID) finds nothing pending: no hook runs again.
    const again = ledgerOn(connection, 'agent-a', { now: Date.now });
    expect(await again.open()).toEqual([]);
    expect([...calls.values()].every((count) => count === 1)).toBe(true);
    await again.close();
  });

  it('reports at close the hook results it could not write', async () => {
    const connection = await connect();
    const ledger = ledgerOn(connection, 'agent-a', { leaseMs: 10_000, closeTimeoutMs: 200 });
    await ledger.open();
    const vote = makeVote(1);
    await ledger.recordPending([vote]);
    await redis.stop();
    await expect.poll(() => connection.isUp).toBe(false);
    const done = ledger.recordHookDone(vote.key, 'pay').catch((error: unknown) => error);
    const letter = ledger.recordDeadLetter(makeLetter(vote, 'sms')).catch((error: unknown) => error);
    const started = Date.now();
    await expect(ledger.close()).rejects.toThrow(/2 change\(s\) could not be written before closing \(record that hook "pay" ran for vote 1:\d+; record the dead letter/);
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(await done).toBeInstanceOf(RedisUnavailableError);
    expect(await letter).toBeInstanceOf(RedisUnavailableError);
    await redis.start();
    await connection.whenUp({ timeoutMs: 10_000 });
  });

  it('takes a vote whose record Redis lost (a failover) as a duplicate when this agent knew it, and leaves it finished', async () => {
    const connection = await connect();
    const ledger = ledgerOn(connection, 'agent-a', { leaseMs: 10_000 });
    await ledger.open();
    const done = makeVote(1);
    const running = makeVote(2);
    await ledger.recordPending([done, running]);
    await ledger.recordHookDone(done.key, 'pay');
    await ledger.recordComplete(done.key);
    // A failover that took back every write: the records and the index are gone.
    const keys = (await connection.client.sendCommand(['KEYS', `${connection.prefix}vote*`])) as string[];
    await connection.client.sendCommand(['DEL', ...keys.map(String)]);
    await connection.client.sendCommand(['DEL', connection.key('votes', 'pending')]);
    // The service sends both again: neither is run again; a stranger's vote still is.
    const stranger = makeVote(3);
    expect((await ledger.recordPending([done, running, stranger])).map((vote) => vote.key)).toEqual([stranger.key]);
    await expect.poll(async () => (await connection.client.sendCommand(['HGET', connection.key('vote', done.key), 'c'])) as string).toBe('1');
    // The one still running here stays pending under this agent, for its job to finish.
    expect(await connection.client.sendCommand(['HGET', connection.key('votes', 'pending'), running.key])).toBe('agent-a');
    await ledger.close();
  });
});
