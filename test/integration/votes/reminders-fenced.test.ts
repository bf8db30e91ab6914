import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RedisConnection } from '../../../src/redis/connection.js';
import { FencedError } from '../../../src/store/errors.js';
import { createRedisReminderStore } from '../../../src/votes/reminders/redis-store.js';
import { connectTestRedis, startTestRedis, type TestRedis } from '../../helpers/redis.js';
import { programPath } from '../../setup/provided.js';

/**
 * Firing reminders is a leader's write: the scripts that read what is due and remove what fired
 * check the leader's fencing token against `leader:fence` in the same script, so a leader that
 * lost its lease (frozen past it, on the far side of a failover) fires nothing.
 */
describe.skipIf(!programPath('redis-server'))('vote reminders on Redis: fired under the newest fencing token only', () => {
  let redis: TestRedis;
  let connection: RedisConnection;
  beforeAll(async () => {
    redis = await startTestRedis();
    connection = await connectTestRedis(redis, 'fenced:');
  });
  afterAll(async () => {
    await connection?.close();
    await redis?.close();
  });

  it('fires with the newest token, and refuses an older one or none', async () => {
    let token: number | undefined = 7;
    const store = createRedisReminderStore({ connection, fence: () => token });
    const now = Date.now();
    const record = { projectId: 'p', userId: 'u', createdMs: now - 20_000, expiresMs: now - 10_000, platformId: null, weight: 1, road: 'poll' as const };
    await store.schedule([record]);
    await connection.client.sendCommand(['SET', connection.key('leader', 'fence'), '7']);
    const due = await store.due(now, 10);
    expect(due).toHaveLength(1);
    // A newer lease was handed out: this leader's writes are refused, nothing is removed.
    await connection.client.sendCommand(['SET', connection.key('leader', 'fence'), '8']);
    await expect(store.end(due.map((d) => d.record), [])).rejects.toThrow(FencedError);
    await expect(store.due(now, 10)).rejects.toThrow(/fencing token 7 is not the newest \(the newest is 8\)/);
    token = undefined;
    await expect(store.due(now, 10)).rejects.toThrow(/holds no lease/);
    token = 8;
    expect(await store.due(now, 10)).toHaveLength(1);
    await store.end((await store.due(now, 10)).map((d) => d.record), []);
    expect(await store.size()).toBe(0);
  });
});
