import { redisFailure, type RedisConnection } from '../redis/connection.js';
import { REDIS_KEYS } from '../redis/keys.js';
import { FencedError, StoreError } from './errors.js';
import type { StateStore, StoreFence } from './types.js';

/** Options of {@link createRedisStore}. */
export interface RedisStoreOptions {
  /** The agent's Redis connection (started by the caller, who also closes it). */
  connection: RedisConnection;
  /** Fencing of leader-only keys. Default: none (every write allowed). */
  fence?: StoreFence;
}

/**
 * Writes `KEYS[1]` only while `KEYS[2]` (`leader:fence`) still holds the writer's token: a leader
 * that lost its lease (paused, partitioned) cannot overwrite what its successor wrote. One script,
 * so no new lease can slip in between the check and the write.
 */
const FENCED_WRITE = `
local current = redis.call('GET', KEYS[2])
if current ~= ARGV[1] then return {0, current or ''} end
if ARGV[2] == 'set' then redis.call('SET', KEYS[1], ARGV[3]) else redis.call('DEL', KEYS[1]) end
return {1, current}
`;

/** SCAN batch size: big enough for few round trips, small enough not to block Redis. */
const SCAN_COUNT = '1000';

/** `prefix` as a literal inside a SCAN MATCH glob. */
export function escapeGlob(prefix: string): string {
  return prefix.replace(/[*?[\]\\]/g, '\\$&');
}

/**
 * The state store in Redis (`state.redis`), shared by every agent of the bot. Each value is a JSON
 * string at `<prefix>state:<key>`.
 *
 * - A write resolves once Redis acknowledged it, durable or not: as durable as Redis is configured
 *   to be (`appendonly yes` keeps it across a Redis restart). `flush()` has nothing to do.
 * - Writes of keys the `fence` names (leader-only keys) go through a script that checks
 *   `leader:fence` still equals this agent's token; otherwise, and when this agent does not lead,
 *   they throw {@link FencedError} and nothing is written.
 * - `open()` neither waits for Redis nor fails when it is down (the agent keeps running and
 *   reconnects); each command then fails at once with a `RedisUnavailableError` saying what it was
 *   doing. The store never starts or closes the connection: the agent owns it.
 * - Like the other stores, writes before `open()` and after `close()` throw a `StoreError`.
 */
export function createRedisStore(options: RedisStoreOptions): StateStore {
  const { connection, fence } = options;
  const { client } = connection;
  const fencedWrite = connection.script(FENCED_WRITE);
  const fenceKey = connection.key(REDIS_KEYS.fence);
  const description = `${connection.describe()} (prefix ${connection.prefix})`;
  const stateKey = (key: string) => connection.key(REDIS_KEYS.state(key));
  let phase: 'new' | 'open' | 'closed' = 'new';

  function requireOpen(action: string): void {
    if (phase === 'open') return;
    const why = phase === 'new' ? 'call open() first' : 'the store is closed';
    throw new StoreError(`cannot ${action} the state in ${description}: ${why}`, description);
  }

  /** Sets (`json` given) or deletes `key`, through the fence when it applies to `key`. */
  async function write(key: string, json: string | undefined): Promise<void> {
    const doing = json === undefined ? `delete state key "${key}"` : `write state key "${key}"`;
    if (fence?.applies(key) === true) {
      const token = fence.token();
      if (token === undefined) throw new FencedError(key, undefined);
      let reply: unknown;
      try {
        reply = await fencedWrite.run([stateKey(key), fenceKey], [String(token), json === undefined ? 'del' : 'set', json ?? '']);
      } catch (error) {
        throw redisFailure(doing, error);
      }
      const [ok, current] = reply as [number, string];
      if (ok !== 1) throw new FencedError(key, token, current === '' ? 'no lease was ever handed out' : `the newest is ${current}`);
      return;
    }
    try {
      if (json === undefined) await client.sendCommand(['DEL', stateKey(key)]);
      else await client.sendCommand(['SET', stateKey(key), json]);
    } catch (error) {
      throw redisFailure(doing, error);
    }
  }

  return {
    async open() {
      // Nothing to load and nothing to wait for: a Redis that is down fails the first command instead.
      phase = 'open';
    },

    async get<T>(key: string) {
      let raw: unknown;
      try {
        raw = await client.sendCommand(['GET', stateKey(key)]);
      } catch (error) {
        throw redisFailure(`read state key "${key}"`, error);
      }
      return raw === null || raw === undefined ? undefined : (JSON.parse(String(raw)) as T);
    },

    async set(key, value) {
      requireOpen('write');
      const json = JSON.stringify(value);
      if (json === undefined) throw new TypeError(`cannot store ${typeof value} under "${key}": values are JSON; use delete() to remove a key`);
      await write(key, json);
    },

    async delete(key) {
      requireOpen('write');
      await write(key, undefined);
    },

    async keys(prefix) {
      const base = stateKey('');
      const pattern = `${escapeGlob(stateKey(prefix))}*`;
      // SCAN may return a key twice (a rehash during the walk): a set keeps each once.
      const found = new Set<string>();
      let cursor = '0';
      try {
        do {
          const [next, batch] = (await client.sendCommand(['SCAN', cursor, 'MATCH', pattern, 'COUNT', SCAN_COUNT])) as [string, string[]];
          cursor = String(next);
          for (const key of batch) found.add(String(key).slice(base.length));
        } while (cursor !== '0');
      } catch (error) {
        throw redisFailure(`list state keys starting with "${prefix}"`, error);
      }
      return [...found];
    },

    async flush() {
      // Every write is in Redis once it resolved.
    },

    async close() {
      // The connection is the agent's: it closes it after every user of it.
      if (phase === 'open') phase = 'closed';
    },

    describe: () => description,
  };
}
