import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisConnection, RedisUnavailableError, type RedisConnection } from '../../../src/redis/connection.js';
import { describeRedisUrl } from '../../../src/redis/keys.js';
import { startTestRedis, type TestRedis } from '../../helpers/redis.js';
import { programPath } from '../../setup/provided.js';

describe.skipIf(!programPath('redis-server'))('the Redis connection', () => {
  let redis: TestRedis;
  let connection: RedisConnection;

  beforeAll(async () => {
    redis = await startTestRedis();
    connection = createRedisConnection({ url: redis.url, prefix: 'test:', reconnectDelaysMs: [50] });
    connection.start();
    await connection.whenUp({ timeoutMs: 5_000 });
  });
  afterAll(async () => {
    await connection?.close();
    await redis?.close();
  });

  it('says it is up once connected', () => {
    expect(connection.isUp).toBe(true);
  });

  it('prefixes keys and runs Lua scripts by SHA, loading them when Redis does not know them', async () => {
    expect(connection.key('state', 'votes:cursor')).toBe('test:state:votes:cursor');
    const script = connection.script("return redis.call('INCRBY', KEYS[1], ARGV[1])");
    await redis.command('SCRIPT', 'FLUSH');
    expect(await script.run([connection.key('n')], [2])).toBe(2);
    expect(await script.run([connection.key('n')], [3])).toBe(5);
  });

  it('fails commands at once while Redis is down, says why, and comes back by itself', async () => {
    const downs: string[] = [];
    connection.on('down', (reason) => downs.push(reason));
    await redis.stop();
    await expect.poll(() => connection.isUp).toBe(false);
    const started = Date.now();
    await expect(connection.client.get(connection.key('n'))).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(downs.length).toBeGreaterThan(0);
    await expect(connection.whenUp({ timeoutMs: 100 })).rejects.toBeInstanceOf(RedisUnavailableError);
    expect(connection.downReason).toEqual(expect.any(String));
    await redis.start();
    await connection.whenUp({ timeoutMs: 10_000 });
    expect(connection.isUp).toBe(true);
    expect(connection.downReason).toBeUndefined();
    // The append-only file kept the data across the restart.
    expect(await connection.client.get(connection.key('n'))).toBe('5');
  });

  it('never shows a password when it describes itself', () => {
    const described = describeRedisUrl('redis://agent:hunter2-secret@redis.internal:6380/2');
    expect(described).toBe('redis://redis.internal:6380/2');
    const other = createRedisConnection({ url: 'redis://:hunter2-secret@127.0.0.1:1' });
    expect(other.describe()).not.toContain('hunter2');
  });

  it('connects again after a close, and after a close still under way', async () => {
    const own = createRedisConnection({ url: redis.url, prefix: 'test:', reconnectDelaysMs: [50] });
    own.start();
    await own.whenUp({ timeoutMs: 5_000 });
    const downs: string[] = [];
    own.on('down', (reason) => downs.push(reason));
    await own.close();
    expect(own.isUp).toBe(false);
    own.start();
    await own.whenUp({ timeoutMs: 5_000 });
    expect(await own.client.get(own.key('n'))).toBe('5');
    const closing = own.close();
    own.start();
    await closing;
    await own.whenUp({ timeoutMs: 5_000 });
    expect(await own.client.get(own.key('n'))).toBe('5');
    await own.close();
    // A close asked for is not an outage.
    expect(downs).toEqual([]);
  });
});
