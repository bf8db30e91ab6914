import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { RedisConnection } from '../../../src/redis/connection.js';
import type { StoredReport } from '../../../src/stats/sources/push-reports.js';
import { createPushSharer, type PushSharer, type PushSharerOptions } from '../../../src/stats/sources/push-share.js';
import { redisShardsSource } from '../../../src/stats/sources/redis-shards.js';
import { PUSH_WORDING } from '../../../src/stats/sources/redis-shards-reports.js';
import { connectTestRedis, startTestRedis, type TestRedis } from '../../helpers/redis.js';
import { programPath } from '../../setup/provided.js';
import { Registry } from 'prom-client';
import { parseConfig } from '../../../src/agent/agent.js';
import { createListingClient } from '../../../src/api/client.js';
import { silentLogger } from '../../../src/log/agent-logger.js';
import type { CapabilityContext } from '../../../src/runtime/capability.js';
import { createAgentMetrics } from '../../../src/runtime/metrics.js';
import { createReadiness } from '../../../src/runtime/readiness.js';
import { createPushShareCapability } from '../../../src/stats/push-share-capability.js';
import { createMemoryStore } from '../../../src/store/memory.js';
import { call } from '../../helpers/http.js';
import { freePort } from '../../helpers/ports.js';

/**
 * The push sharer against a real redis-server: the write script keeps the newest push of each
 * shard whichever agent writes last, each key lives until its push is staleAfter old, and a push
 * that could not be written while Redis was down is written when it comes back.
 */

const PREFIX = 'push-share-test:';
const STALE = 60_000;

const held = (shard_id: number, server_count: number, receivedAt: number, shard_count = 3): StoredReport => ({ shard_id, shard_count, server_count, receivedAt });

describe.skipIf(!programPath('redis-server'))('pushed counts shared through Redis', () => {
  let redis: TestRedis;
  let connection: RedisConnection;
  const sharers: PushSharer[] = [];
  const clock = { t: 0 };

  const sharer = (process: string, overrides: Partial<PushSharerOptions> = {}) => {
    const made = createPushSharer({ connection, staleAfterMs: STALE, everyMs: 60_000, process, now: () => clock.t, ...overrides });
    sharers.push(made);
    return made;
  };
  const stored = async (id: number) => JSON.parse((await connection.client.get(`${PREFIX}shards:${id}`)) ?? 'null') as { server_count: number; process: string; reportedAt: number } | null;

  beforeAll(async () => {
    redis = await startTestRedis();
    connection = await connectTestRedis(redis, PREFIX);
  });
  beforeEach(async () => {
    await Promise.all(sharers.splice(0).map((s) => s.stop()));
    await redis.command('FLUSHALL');
    clock.t = Date.now();
  });
  afterAll(async () => {
    await Promise.all(sharers.map((s) => s.stop()));
    await connection?.close();
    await redis?.close();
  });

  it('keeps the newest push of each shard in Redis: a re-write of an older push never replaces it', async () => {
    const a = sharer('agent-a');
    const b = sharer('agent-b');
    const t = clock.t;
    expect(await a.share([held(0, 100, t - 3_000), held(1, 110, t - 3_000)])).toBe(true);
    expect(await b.share([held(1, 210, t - 2_000), held(2, 220, t - 2_000)])).toBe(true);
    // Agent A writes everything it holds again (a periodic round, Redis coming back): its shard 1 is older.
    await a.shareAll();
    expect(await stored(1)).toMatchObject({ server_count: 210, process: 'agent-b', reportedAt: t - 2_000 });
    expect(await stored(0)).toMatchObject({ server_count: 100, process: 'agent-a' });
    // A newer push to A wins, and B's re-write does not take it back.
    expect(await a.share([held(1, 111, t - 1_000)])).toBe(true);
    await b.shareAll();
    expect(await stored(1)).toMatchObject({ server_count: 111, process: 'agent-a' });

    const sum = redisShardsSource({ connection, staleAfterMs: STALE }, PUSH_WORDING);
    expect(await sum.read()).toEqual({ ready: true, serverCount: 100 + 111 + 220, shardCount: 3, shards: [100, 111, 220] });
    // Each key expires staleAfter after its push, not after the write.
    const pttl = Number(await connection.client.pTTL(`${PREFIX}shards:2`));
    expect(pttl).toBeGreaterThan(STALE - 2_000 - 1_000);
    expect(pttl).toBeLessThanOrEqual(STALE - 2_000);
  });

  it('names what is missing in the push\'s words', async () => {
    await sharer('agent-a').share([held(0, 1, clock.t)]);
    const reading = await redisShardsSource({ connection, staleAfterMs: STALE }, PUSH_WORDING).read();
    expect(reading).toEqual({ ready: false, reason: 'counts not ready: no report from shards 1, 2 (a pushed report counts for stats.push.staleAfter after it reached an agent)' });
    expect(await redisShardsSource({ connection, staleAfterMs: STALE, shardCount: 4 }, PUSH_WORDING).read()).toEqual({
      ready: false,
      reason: expect.stringContaining('last reported for 3 shards, not 4 (stats.push.shardCount is 4)'),
    });
  });

  it('holds a push Redis could not take, and writes it when Redis returns, with its original expiry', async () => {
    const states: unknown[] = [];
    const own = await connectTestRedis(redis, PREFIX);
    try {
      const b = createPushSharer({ connection: own, staleAfterMs: STALE, everyMs: 60_000, process: 'agent-b', now: () => clock.t, onState: (s) => states.push(s) });
      sharers.push(b);
      b.start();
      await redis.stop();
      await vi.waitFor(() => expect(own.isUp).toBe(false), { timeout: 5_000 });
      const pushedAt = clock.t;
      expect(await b.share([held(0, 42, pushedAt)])).toBe(false);
      expect(b.state()).toEqual({ unshared: 1, problem: expect.stringContaining('share the pushed counts') });
      await redis.start();
      // The sharer writes what it holds on the connection's 'up', without another push.
      await vi.waitFor(async () => expect(await stored(0)).toMatchObject({ server_count: 42, reportedAt: pushedAt }), { timeout: 5_000, interval: 50 });
      // Another connection may read the write before the sharer has heard Redis answer it.
      await vi.waitFor(() => expect(b.state()).toEqual({ unshared: 0, problem: undefined }), { timeout: 5_000, interval: 10 });
      expect(states.at(-1)).toEqual({ unshared: 0, problem: undefined });
    } finally {
      await own.close();
      await vi.waitFor(() => expect(connection.isUp).toBe(true), { timeout: 5_000 });
    }
  });

  it('does not write a held push that went stale while Redis was down', async () => {
    const own = await connectTestRedis(redis, PREFIX);
    try {
      const late = createPushSharer({ connection: own, staleAfterMs: STALE, everyMs: 60_000, process: 'agent-c', now: () => clock.t });
      sharers.push(late);
      await redis.stop();
      await vi.waitFor(() => expect(own.isUp).toBe(false), { timeout: 5_000 });
      expect(await late.share([held(0, 7, clock.t)])).toBe(false);
      await redis.start();
      await vi.waitFor(() => expect(own.isUp).toBe(true), { timeout: 5_000 });
      // stored() reads through the shared connection, which reconnects on its own schedule.
      await vi.waitFor(() => expect(connection.isUp).toBe(true), { timeout: 5_000 });
      clock.t += STALE;
      await late.shareAll();
      expect(await stored(0)).toBeNull();
      expect(late.state().unshared).toBe(0);
    } finally {
      await own.close();
      await vi.waitFor(() => expect(connection.isUp).toBe(true), { timeout: 5_000 });
    }
  });

  it('the push capability listens, shares, and does so again after a stop and a start (as often as the agent restarts it)', async () => {
    const port = await freePort();
    const key = 'push-share-capability-key-0123456789';
    const config = parseConfig({
      service: { token: 'aaa.bbb.ccc', v1: 'http://127.0.0.1:9/api/v1' },
      state: { directory: '.', redis: { url: redis.url, prefix: PREFIX } },
      stats: { enabled: true, source: 'push', push: { listen: `127.0.0.1:${port}`, key } },
    });
    const readiness = createReadiness(Date.now);
    const context: CapabilityContext = {
      config,
      client: createListingClient({ projectToken: 'aaa.bbb.ccc', v1BaseUrl: 'http://127.0.0.1:9/api/v1' }),
      store: createMemoryStore(),
      logger: silentLogger,
      metrics: createAgentMetrics(new Registry(), readiness),
      readiness,
      now: Date.now,
      reportError: () => undefined,
      emit: () => undefined,
    };
    const capability = createPushShareCapability({ connection, process: 'agent-a' });
    expect(capability.startsBeforeService).toBe(true);
    const url = `http://127.0.0.1:${port}/stats`;
    for (const servers of [5, 6]) {
      await capability.start(context);
      expect(readiness.snapshot().components.push).toMatchObject({ ready: true, detail: `listening on ${url}; pushes shared through Redis` });
      expect((await call(url, { method: 'POST', bearer: key, json: { shards: [servers] } })).status).toBe(204);
      expect(await stored(0)).toMatchObject({ server_count: servers, process: 'agent-a' });
      // GET with the key answers the shared sum.
      expect((await call(url, { bearer: key })).body).toMatchObject({ ready: true, serverCount: servers, reports: [{ shard_id: 0, server_count: servers }] });
      await capability.stop(Date.now() + 1_000);
      await expect(call(url, { method: 'POST', bearer: key, json: { shards: [1] } })).rejects.toThrow();
    }
  });
});
