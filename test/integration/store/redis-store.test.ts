import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisConnection, RedisUnavailableError, type RedisConnection } from '../../../src/redis/connection.js';
import { FencedError } from '../../../src/store/errors.js';
import { createRedisStore, escapeGlob } from '../../../src/store/redis.js';
import { connectTestRedis, startTestRedis, type TestRedis } from '../../helpers/redis.js';
import { programPath } from '../../setup/provided.js';
import { describeStoreContract } from '../../unit/store/store-contract.js';

/** Without a redis-server (test/setup/ says why and how to get one), every test here is skipped. */
const withoutRedis = !programPath('redis-server');

let redis: TestRedis;
let prefixes = 0;

beforeAll(async () => {
  redis = await startTestRedis();
});
afterAll(async () => {
  await redis?.close();
});

/** A started connection under a prefix of its own: tests share the server, never a key. */
async function connect(): Promise<RedisConnection> {
  prefixes += 1;
  const connection = await connectTestRedis(redis, `t${prefixes}:`);
  return connection;
}

describe.skipIf(withoutRedis)('on a redis-server', () => {
  describeStoreContract('redis store', async () => {
    const connection = await connect();
    return { store: createRedisStore({ connection }), cleanup: () => connection.close() };
  });
});

describe.skipIf(withoutRedis)('the Redis store', () => {
  let connection: RedisConnection;

  beforeAll(async () => {
    connection = await connect();
  });
  afterAll(async () => {
    await connection?.close();
  });

  it('keeps each value as JSON at <prefix>state:<key>', async () => {
    const store = createRedisStore({ connection });
    await store.open();
    await store.set('layout:cursor', { cursor: 'abc' });
    expect(await connection.client.get(connection.key('state', 'layout:cursor'))).toBe('{"cursor":"abc"}');
  });

  it('fences leader-only keys: refused with no token or a stale one, written with the current one', async () => {
    let token: number | undefined;
    const store = createRedisStore({ connection, fence: { token: () => token, applies: (key) => key === 'votes:cursor' || key === 'commands:hash' } });
    await store.open();
    const fence = connection.key('leader', 'fence');

    // No lease handed out yet, and this agent does not lead.
    await expect(store.set('votes:cursor', 'a')).rejects.toBeInstanceOf(FencedError);
    await connection.client.set(fence, '5');
    const refused = await store.set('votes:cursor', 'b').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(FencedError);
    expect((refused as FencedError).message).toMatch(/no longer holds the leader lease.*refused|refused.*no longer holds the leader lease/);
    expect((refused as FencedError).code).toBe('store_fenced');

    token = 4; // a lease this agent held before another agent took over
    await expect(store.set('votes:cursor', 'stale')).rejects.toThrow(/token 4 is not the newest \(the newest is 5\)/);
    await expect(store.delete('votes:cursor')).rejects.toBeInstanceOf(FencedError);
    expect(await store.get('votes:cursor')).toBeUndefined();

    token = 5;
    await store.set('votes:cursor', 'current', { durable: true });
    expect(await store.get('votes:cursor')).toBe('current');
    await store.set('commands:hash', 'h');

    // A new lease (INCR) makes token 5 stale at once, for deletes too.
    await connection.client.incr(fence);
    await expect(store.delete('votes:cursor')).rejects.toBeInstanceOf(FencedError);
    expect(await store.get('votes:cursor')).toBe('current');
    token = 6;
    await store.delete('votes:cursor');
    expect(await store.get('votes:cursor')).toBeUndefined();

    // Keys the fence does not name are written by any agent, leading or not.
    token = undefined;
    await store.set('metrics:local', { n: 1 });
    expect(await store.get('metrics:local')).toEqual({ n: 1 });
    await store.delete('metrics:local');
  });

  it('lists keys by a prefix with glob characters taken literally', async () => {
    const store = createRedisStore({ connection });
    await store.open();
    await store.set('g*[x]?\\:1', 1);
    await store.set('g*[x]?\\:2', 2);
    await store.set('gA[x]Z\\:3', 3);
    await store.set('gAxZ:4', 4);
    expect((await store.keys('g*[x]?\\:')).sort()).toEqual(['g*[x]?\\:1', 'g*[x]?\\:2']);
    expect(escapeGlob('a*b?c[d]e\\')).toBe('a\\*b\\?c\\[d\\]e\\\\');
    // More keys than one SCAN step: every one is found once.
    await Promise.all(Array.from({ length: 2_500 }, (_, i) => store.set(`many:${i}`, i)));
    expect(new Set(await store.keys('many:')).size).toBe(2_500);
  });

  it('describes itself without the password', () => {
    const other = createRedisConnection({ url: 'redis://agent:hunter2@127.0.0.1:6379' });
    expect(createRedisStore({ connection: other }).describe()).toBe('redis redis://127.0.0.1:6379 (prefix listing-agent:)');
  });

  it('keeps values across a Redis restart (append-only file)', async () => {
    const store = createRedisStore({ connection });
    await store.open();
    await store.set('survives', { yes: true }, { durable: true });
    await redis.stop();
    await redis.start();
    await connection.whenUp({ timeoutMs: 10_000 });
    expect(await store.get('survives')).toEqual({ yes: true });
  });

  it('opens while Redis is down, fails each command fast with a RedisUnavailableError, and works again after a restart', async () => {
    await redis.stop();
    await expect.poll(() => connection.isUp).toBe(false);
    const store = createRedisStore({ connection });
    const started = Date.now();
    await store.open();
    const failures = await Promise.all([
      store.set('down', 1).catch((error: unknown) => error),
      store.get('down').catch((error: unknown) => error),
      store.delete('down').catch((error: unknown) => error),
      store.keys('d').catch((error: unknown) => error),
    ]);
    expect(Date.now() - started).toBeLessThan(1_000);
    for (const failure of failures) expect(failure).toBeInstanceOf(RedisUnavailableError);
    expect((failures[0] as Error).message).toMatch(/^Redis: could not write state key "down": /);
    expect((failures[1] as Error).message).toMatch(/^Redis: could not read state key "down": /);
    expect((failures[3] as Error).message).toMatch(/^Redis: could not list state keys starting with "d": /);
    await redis.start();
    await connection.whenUp({ timeoutMs: 10_000 });
    await store.set('down', 2);
    expect(await store.get('down')).toBe(2);
  });
});
