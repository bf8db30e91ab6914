import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/log/agent-logger.js';
import type { RedisConnection } from '../../../src/redis/connection.js';
import { createRedisVoteLedger } from '../../../src/votes/ledger-redis.js';
import { createVotePipeline } from '../../../src/votes/pipeline.js';
import type { LedgerEntry, VoteHook } from '../../../src/votes/types.js';
import { connectTestRedis, startTestRedis, type TestRedis } from '../../helpers/redis.js';
import { programPath } from '../../setup/provided.js';
import { HOUR, makeVote } from '../../unit/votes/votes-fixtures.js';

/**
 * Issue 35 item 4, one agent alone: a vote this agent rewarded, whose completion is still queued
 * because Redis refuses writes, is not rewarded again by this agent's own sweep. Redis refuses
 * writes but answers reads, as a demoted primary under an old connection does (`READONLY`), or a
 * primary whose replica is away with `min-replicas-to-write 1` (`NOREPLICAS`, used here: the
 * connection stays up, so the sweep runs). A later delivery of the vote fails the same way, so
 * the ledger looks it up again at its next sweep (its `recordPending` outcome is unknown); it is
 * still pending under this agent in Redis, and the sweep handed it back to the pipeline, which had
 * already forgotten the job: the hook ran twice, one after the other.
 */

let redis: TestRedis;
const opened: RedisConnection[] = [];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function connect(prefix: string): Promise<RedisConnection> {
  const connection = await connectTestRedis(redis, prefix);
  opened.push(connection);
  return connection;
}

/** Redis refuses every write (`NOREPLICAS`: it has no replica), and answers reads. */
const refuseWrites = () => redis.command('CONFIG', 'SET', 'min-replicas-to-write', '1');
const takeWrites = () => redis.command('CONFIG', 'SET', 'min-replicas-to-write', '0');

describe.skipIf(!programPath('redis-server'))('the Redis vote ledger: a vote whose completion is still queued', () => {
  beforeAll(async () => {
    redis = await startTestRedis();
  });
  afterAll(async () => {
    await Promise.all(opened.map((connection) => connection.close()));
    await redis?.close();
  });

  it('is not rewarded again by this agent\'s sweep while Redis refuses the completion', { timeout: 20_000 }, async () => {
    const ledger = createRedisVoteLedger({ connection: await connect('queued1:'), agentId: 'agent-a', leaseMs: 200, keepKeysForMs: HOUR });
    const calls: string[] = [];
    let release: () => void = () => undefined;
    const paid = new Promise<void>((resolve) => (release = resolve));
    const hook: VoteHook = {
      name: 'pay',
      retries: 0,
      run: async (vote) => {
        calls.push(vote.key);
        if (calls.length === 1) await paid;
      },
    };
    const pipeline = createVotePipeline({ ledger, hooks: [hook], logger: silentLogger, now: Date.now });
    await pipeline.start();
    const vote = makeVote(1);
    expect((await pipeline.ingest([vote], 'webhook')).accepted).toHaveLength(1);
    await expect.poll(() => calls).toEqual([vote.key]);
    await refuseWrites();
    try {
      release(); // the call ends while Redis refuses writes: the vote's completion stays queued
      // The same vote again (the poller's page, a retried delivery): refused as well.
      await expect(pipeline.ingest([vote], 'poll')).rejects.toThrow(/NOREPLICAS/);
      await sleep(1_200); // six sweeps
      expect(calls).toEqual([vote.key]);
    } finally {
      await takeWrites();
    }
    await pipeline.idle();
    await sleep(600); // more sweeps, the completion written: still once
    expect(calls).toEqual([vote.key]);
    await pipeline.stop(Date.now() + 1_000);
    await ledger.close();
  });

  it('hands no such vote to onRecovered, nor to a second open(), and hands over one it did not finish', { timeout: 20_000 }, async () => {
    const ledger = createRedisVoteLedger({ connection: await connect('queued2:'), agentId: 'agent-a', leaseMs: 200, keepKeysForMs: HOUR });
    await ledger.open();
    const recovered: string[] = [];
    ledger.onRecovered((entries: LedgerEntry[]) => recovered.push(...entries.map((entry) => entry.vote.key)));
    const [finished, unfinished] = [makeVote(1), makeVote(2)];
    expect(await ledger.recordPending([finished, unfinished])).toHaveLength(2);
    await refuseWrites();
    let completed: Promise<void>;
    try {
      completed = ledger.recordComplete(finished.key);
      await expect(ledger.recordPending([finished, unfinished])).rejects.toThrow(/NOREPLICAS/);
      await sleep(1_000);
      // The unfinished vote was looked up again (its record's outcome was unknown): this agent's, handed over.
      expect(recovered).toEqual([unfinished.key]);
      // A second open() (a pipeline started again on the open ledger) re-reads this agent's pending votes.
      expect((await ledger.open()).map((entry) => entry.vote.key)).toEqual([unfinished.key]);
    } finally {
      await takeWrites();
    }
    await completed;
    expect(await redis.command('HEXISTS', 'queued2:votes:pending', finished.key)).toBe(':0');
    await ledger.close();
  });
});
