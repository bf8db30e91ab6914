import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { AgentLogger } from '../../../src/log/agent-logger.js';
import { configSchema } from '../../../src/config/schema.js';
import { type RedisConnection } from '../../../src/redis/connection.js';
import { configuredVoteHooks } from '../../../src/votes/configured.js';
import { createStreamHook, createVoteConsumer, STREAM_HOOK_NAME, type StreamVoteContext, type VoteConsumer } from '../../../src/votes/stream.js';
import type { Vote } from '../../../src/votes/types.js';
import { connectTestRedis, startTestRedis, type TestRedis } from '../../helpers/redis.js';
import { programPath } from '../../setup/provided.js';
import { testVote } from '../../helpers/stream-votes.js';

const PREFIX = 'stream-test:';
const KEY = 'votes:stream';

/** A logger that keeps what it is told, for assertions. */
function recordingLogger(lines: string[]): AgentLogger {
  const logger: AgentLogger = {
    error: (obj, msg) => void lines.push(`error ${msg ?? obj}`),
    warn: (obj, msg) => void lines.push(`warn ${msg ?? obj}`),
    info: (obj, msg) => void lines.push(`info ${msg ?? obj}`),
    debug: () => undefined,
    child: () => logger,
  };
  return logger;
}

describe.skipIf(!programPath('redis-server'))('the reward stream', () => {
  let redis: TestRedis;
  let connection: RedisConnection;
  const consumers: VoteConsumer[] = [];

  const consumer = (name: string, handler: (vote: Vote, context: StreamVoteContext) => Promise<void>, extra: Partial<Parameters<typeof createVoteConsumer>[0]> = {}) => {
    const started = createVoteConsumer({ url: redis.url, prefix: PREFIX, key: KEY, consumer: name, handler, claimIdleMs: 400, blockMs: 200, reconnectDelaysMs: [50], ...extra });
    consumers.push(started);
    return started;
  };

  beforeAll(async () => {
    redis = await startTestRedis();
    connection = await connectTestRedis(redis, PREFIX);
  });
  beforeEach(async () => {
    await Promise.all(consumers.splice(0).map((c) => c.stop()));
    await redis.command('FLUSHALL');
  });
  afterAll(async () => {
    await Promise.all(consumers.map((c) => c.stop()));
    await connection?.close();
    await redis?.close();
  });

  it('appends each vote once, however often the hook runs for it', async () => {
    const hook = createStreamHook({ connection, key: KEY, maxLength: 1_000, markerTtlMs: 3_600_000 });
    expect(hook.name).toBe(STREAM_HOOK_NAME);
    const votes = Array.from({ length: 20 }, (_, n) => testVote(n));
    const context = { idempotencyKey: '', attempt: 1, signal: new AbortController().signal };
    // Twice each, the second runs racing the first.
    await Promise.all([...votes, ...votes].map((vote) => hook.run(vote, { ...context, idempotencyKey: vote.key })));
    expect(await connection.client.xLen(`${PREFIX}${KEY}`)).toBe(20);

    const again = await hook.appendVote(votes[3]!);
    expect(again.appended).toBe(false);
    const entries = await connection.client.sendCommand(['XRANGE', `${PREFIX}${KEY}`, again.entryId, again.entryId]);
    expect(JSON.stringify(entries)).toContain(votes[3]!.key);
    // The marker lives past the vote's expiry plus the configured slack.
    const ttl = Number(await connection.client.pTTL(`${PREFIX}streamed:${votes[3]!.key}`));
    expect(ttl).toBeGreaterThan(12 * 3_600_000);
    expect(ttl).toBeLessThanOrEqual(13 * 3_600_000);
  });

  it('refuses to write half: a key that is not a stream gets neither the entry nor the marker', async () => {
    await connection.client.set(`${PREFIX}not-a-stream`, 'x');
    const hook = createStreamHook({ connection, key: 'not-a-stream', maxLength: 1_000, markerTtlMs: 1_000 });
    await expect(hook.run(testVote(1), { idempotencyKey: 'k', attempt: 1, signal: new AbortController().signal })).rejects.toMatchObject({ code: 'redis_unavailable', message: expect.stringContaining('not a stream') });
    expect(await connection.client.exists(`${PREFIX}streamed:${testVote(1).key}`)).toBe(0);
  });

  it('two consumers of one group split the votes, none handled twice, all acknowledged', async () => {
    const handled: Record<string, string[]> = { a: [], b: [] };
    const a = consumer('a', async (vote) => void handled.a!.push(vote.key), { concurrency: 2 });
    const b = consumer('b', async (vote) => void handled.b!.push(vote.key), { concurrency: 2 });
    await Promise.all([a.start(), b.start()]);
    const hook = createStreamHook({ connection, key: KEY, maxLength: 1_000, markerTtlMs: 60_000 });
    const votes = Array.from({ length: 30 }, (_, n) => testVote(n));
    for (const vote of votes) {
      await hook.appendVote(vote);
      await hook.appendVote(vote);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await vi.waitFor(() => expect(handled.a!.length + handled.b!.length).toBe(30), { timeout: 5_000, interval: 20 });
    const all = [...handled.a!, ...handled.b!];
    expect(new Set(all).size).toBe(30);
    expect(all.sort()).toEqual(votes.map((v) => v.key).sort());
    expect(handled.a!.length).toBeGreaterThan(0);
    expect(handled.b!.length).toBeGreaterThan(0);
    await vi.waitFor(async () => expect((await connection.client.sendCommand(['XPENDING', `${PREFIX}${KEY}`, 'rewards']) as unknown[])[0]).toBe(0));
  });

  it('starts again after a stop (and after a stop under way), on new connections, reading where the group is', async () => {
    const handled: string[] = [];
    const c = consumer('again', async (vote) => void handled.push(vote.key));
    const hook = createStreamHook({ connection, key: KEY, maxLength: 1_000, markerTtlMs: 60_000 });
    await c.start();
    await hook.appendVote(testVote(1));
    await vi.waitFor(() => expect(handled).toEqual([testVote(1).key]), { timeout: 5_000, interval: 20 });
    await c.stop();
    // Appended while stopped: the next start reads it.
    await hook.appendVote(testVote(2));
    await c.start();
    await vi.waitFor(() => expect(handled).toEqual([testVote(1).key, testVote(2).key]), { timeout: 5_000, interval: 20 });
    const stopping = c.stop();
    const starting = c.start();
    await stopping;
    await starting;
    await hook.appendVote(testVote(3));
    await vi.waitFor(() => expect(handled).toEqual([1, 2, 3].map((n) => testVote(n).key)), { timeout: 5_000, interval: 20 });
    await c.stop();
    // One connection per run and side: the stopped runs' connections are gone.
    const clients = String(await connection.client.sendCommand(['CLIENT', 'LIST']));
    expect(clients.match(/name=listing-agent-consumer/g) ?? []).toEqual([]);
  });

  it('delivers a failed vote again after claimIdleMs, and acknowledges poison without running it', async () => {
    const lines: string[] = [];
    const calls: StreamVoteContext[] = [];
    const only = consumer(
      'only',
      async (_vote, context) => {
        calls.push(context);
        if (calls.length === 1) throw new Error('reward service down');
      },
      { logger: recordingLogger(lines) },
    );
    await only.start();
    await connection.client.sendCommand(['XADD', `${PREFIX}${KEY}`, '*', 'vote', '{not json']);
    await createStreamHook({ connection, key: KEY, maxLength: 1_000, markerTtlMs: 60_000 }).appendVote(testVote(7));
    await vi.waitFor(() => expect(calls).toHaveLength(2), { timeout: 5_000, interval: 20 });
    expect(calls[0]).toMatchObject({ idempotencyKey: testVote(7).key, deliveries: 1 });
    expect(calls[1]).toMatchObject({ idempotencyKey: testVote(7).key, entryId: calls[0]!.entryId, deliveries: 2 });
    expect(lines.some((line) => line.startsWith('error') && line.includes('poison'))).toBe(true);
    expect(lines.some((line) => line.startsWith('warn reward handler failed'))).toBe(true);
    await vi.waitFor(async () => expect((await connection.client.sendCommand(['XPENDING', `${PREFIX}${KEY}`, 'rewards']) as unknown[])[0]).toBe(0));
  });

  it('rides out a Redis restart, and stop() waits for the handler in flight', async () => {
    const handled: string[] = [];
    let release: (() => void) | undefined;
    const survivor = consumer('survivor', async (vote) => {
      if (vote.key === testVote(2).key) await new Promise<void>((resolve) => (release = resolve));
      handled.push(vote.key);
    });
    await survivor.start();
    const hook = createStreamHook({ connection, key: KEY, maxLength: 1_000, markerTtlMs: 60_000 });
    await hook.appendVote(testVote(1));
    await vi.waitFor(() => expect(handled).toEqual([testVote(1).key]), { timeout: 5_000, interval: 20 });

    await redis.stop();
    await redis.start();
    await connection.whenUp({ timeoutMs: 10_000 });
    await hook.appendVote(testVote(2));
    await vi.waitFor(() => expect(release).toBeDefined(), { timeout: 8_000, interval: 20 });

    const stopping = survivor.stop();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(handled).toEqual([testVote(1).key]);
    release!();
    await stopping;
    expect(handled).toEqual([testVote(1).key, testVote(2).key]);
    expect((await connection.client.sendCommand(['XPENDING', `${PREFIX}${KEY}`, 'rewards']) as unknown[])[0]).toBe(0);
  });

  it('is a configured hook when votes.stream.enabled, after the others, and needs the connection', () => {
    const config = configSchema.parse({
      service: { token: 'a.b.c' },
      state: { redis: { url: redis.url } },
      votes: { stream: { enabled: true }, hooks: [{ type: 'exec', command: ['true'] }] },
    });
    expect(configuredVoteHooks(config, { redis: connection }).map((hook) => hook.name)).toEqual(['exec-1', STREAM_HOOK_NAME]);
    expect(() => configuredVoteHooks(config)).toThrow(expect.objectContaining({ code: 'votes_stream', message: expect.stringContaining('state.redis.url') }));
    const taken = configSchema.parse({
      service: { token: 'a.b.c' },
      state: { redis: { url: redis.url } },
      votes: { stream: { enabled: true }, hooks: [{ type: 'exec', name: STREAM_HOOK_NAME, command: ['true'] }] },
    });
    expect(() => configuredVoteHooks(taken, { redis: connection })).toThrow(/reserved/);
    const off = configSchema.parse({ service: { token: 'a.b.c' } });
    expect(configuredVoteHooks(off).map((hook) => hook.name)).toEqual([]);
  });
});
