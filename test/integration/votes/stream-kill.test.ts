import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type RedisConnection } from '../../../src/redis/connection.js';
import { createStreamHook, createVoteConsumer, type StreamVoteContext } from '../../../src/votes/stream.js';
import type { Vote } from '../../../src/votes/types.js';
import { connectTestRedis, startTestRedis, type TestRedis } from '../../helpers/redis.js';
import { programPath } from '../../setup/provided.js';
import { startTsChild } from '../../helpers/ts-child.js';
import { testVote } from '../../helpers/stream-votes.js';

const PREFIX = 'stream-kill:';
const KEY = 'votes:stream';
const CLAIM_IDLE_MS = 500;

describe.skipIf(!programPath('redis-server'))('the reward stream when a consumer process dies holding a vote', () => {
  let redis: TestRedis;
  let connection: RedisConnection;

  beforeAll(async () => {
    redis = await startTestRedis();
    connection = await connectTestRedis(redis, PREFIX);
  });
  afterAll(async () => {
    await connection?.close();
    await redis?.close();
  });

  it('another consumer claims the vote after claimIdleMs and handles it', async () => {
    const doomed = startTsChild('stream-consumer-process.ts', [redis.url, PREFIX, KEY, 'rewards', 'doomed', String(CLAIM_IDLE_MS)]);
    await doomed.waitForLine(/^started$/, 15_000);
    const vote = testVote(42);
    const { entryId } = await createStreamHook({ connection, key: KEY, maxLength: 1_000, markerTtlMs: 60_000 }).appendVote(vote);
    expect(await doomed.waitForLine(/^took /)).toBe(`took ${vote.key} ${entryId}`);
    await doomed.kill();
    const killedAt = Date.now();

    const handled: { vote: Vote; context: StreamVoteContext; at: number }[] = [];
    const heir = createVoteConsumer({
      url: redis.url,
      prefix: PREFIX,
      key: KEY,
      consumer: 'heir',
      claimIdleMs: CLAIM_IDLE_MS,
      blockMs: 200,
      handler: async (taken, context) => void handled.push({ vote: taken, context, at: Date.now() }),
    });
    await heir.start();
    try {
      await vi.waitFor(() => expect(handled).toHaveLength(1), { timeout: 5_000, interval: 20 });
      expect(handled[0]!.vote).toEqual(vote);
      expect(handled[0]!.context).toEqual({ idempotencyKey: vote.key, entryId, deliveries: 2 });
      // Claimed only once idle long enough, counted from the dead consumer's delivery.
      expect(handled[0]!.at - killedAt).toBeLessThan(3_000);
      await vi.waitFor(async () => expect((await connection.client.sendCommand(['XPENDING', `${PREFIX}${KEY}`, 'rewards']) as unknown[])[0]).toBe(0));
      // Handled once: nothing else comes.
      await new Promise((resolve) => setTimeout(resolve, 2 * CLAIM_IDLE_MS));
      expect(handled).toHaveLength(1);
    } finally {
      await heir.stop();
    }
  });
});
