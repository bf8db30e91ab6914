import { redisFailure, type RedisConnection, type RedisScript } from '../redis/connection.js';
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

/** What the Redis store works with: the connection, the fence, and its phase. */
interface RedisStoreState {
  readonly connection: RedisConnection;
  readonly fence: StoreFence | undefined;
  readonly fencedWrite: RedisScript;
  readonly fenceKey: string;
  /** `redis redis://host:port (prefix listing-agent:)`, for messages. */
  readonly description: string;
  phase: 'new' | 'open' | 'closed';
}

const stateKey = (state: RedisStoreState, key: string) => state.connection.key(REDIS_KEYS.state(key));

function requireOpen(state: RedisStoreState, action: string): void {
  if (state.phase === 'open') return;
  const why = state.phase === 'new' ? 'call open() first' : 'the store is closed';
  throw new StoreError(`cannot ${action} the state in ${state.description}: ${why}`, state.description);
}

/**
 * Sets (`json` given) or deletes `key`, through the fence when it applies to `key`; a durable
 * write resolves once the replicas asked for have it (`RedisConnection.confirm`).
 */
async function write(state: RedisStoreState, key: string, json: string | undefined, durable = true): Promise<void> {
  const on = state.connection.server;
  await writeOnce(state, key, json);
  if (!durable) return;
  const doing = json === undefined ? `the deletion of state key "${key}"` : `the write of state key "${key}"`;
  try {
    await state.connection.confirm(doing, { on });
  } catch (error) {
    throw redisFailure(`confirm ${doing}`, error);
  }
}

async function writeOnce(state: RedisStoreState, key: string, json: string | undefined): Promise<void> {
  const { fence } = state;
  const doing = json === undefined ? `delete state key "${key}"` : `write state key "${key}"`;
  if (fence?.applies(key) === true) {
    const token = fence.token();
    if (token === undefined) throw new FencedError(key, undefined);
    let reply: unknown;
    try {
      reply = await state.fencedWrite.run(
        [stateKey(state, key), state.fenceKey],
        [String(token), json === undefined ? 'del' : 'set', json ?? ''],
      );
    } catch (error) {
      throw redisFailure(doing, error);
    }
    const [ok, current] = reply as [number, string];
    if (ok !== 1) throw new FencedError(key, token, current === '' ? 'no lease was ever handed out' : `the newest is ${current}`);
    return;
  }
  try {
    if (json === undefined) await state.connection.client.sendCommand(['DEL', stateKey(state, key)]);
    else await state.connection.client.sendCommand(['SET', stateKey(state, key), json]);
  } catch (error) {
    throw redisFailure(doing, error);
  }
}

/** The state keys starting with `prefix` (without the key prefix), by SCAN. */
async function scanKeys(state: RedisStoreState, prefix: string): Promise<string[]> {
  const base = stateKey(state, '');
  const pattern = `${escapeGlob(stateKey(state, prefix))}*`;
  // SCAN may return a key twice (a rehash during the walk): a set keeps each once.
  const found = new Set<string>();
  let cursor = '0';
  try {
    do {
      const [next, batch] = (await state.connection.client.sendCommand(['SCAN', cursor, 'MATCH', pattern, 'COUNT', SCAN_COUNT])) as [
        string,
        string[],
      ];
      cursor = String(next);
      for (const key of batch) found.add(String(key).slice(base.length));
    } while (cursor !== '0');
  } catch (error) {
    throw redisFailure(`list state keys starting with "${prefix}"`, error);
  }
  return [...found];
}

/**
 * The state store in Redis (`state.redis`), shared by every agent of the bot. Each value is a JSON
 * string at `<prefix>state:<key>`.
 *
 * - A write resolves once Redis acknowledged it: as durable as Redis is configured to be
 *   (`appendonly yes` keeps it across a Redis restart); a `durable` one (the votes cursor's
 *   checkpoint when it moves) once the replicas asked for have it too (`state.redis.replicas`), or
 *   it rejects: a failover could take it back. `flush()` has nothing to do.
 * - Writes of keys the `fence` names (leader-only keys) go through a script that checks
 *   `leader:fence` still equals this agent's token; otherwise, and when this agent does not lead,
 *   they throw {@link FencedError} and nothing is written.
 * - `open()` neither waits for Redis nor fails when it is down (the agent keeps running and
 *   reconnects); each command then fails at once with a `RedisUnavailableError` saying what it was
 *   doing. The store never starts or closes the connection: the agent owns it.
 * - Like the other stores, writes before `open()` and after `close()` throw a `StoreError`.
 */
export function createRedisStore(options: RedisStoreOptions): StateStore {
  const { connection } = options;
  const state: RedisStoreState = {
    connection,
    fence: options.fence,
    fencedWrite: connection.script(FENCED_WRITE),
    fenceKey: connection.key(REDIS_KEYS.fence),
    description: `${connection.describe()} (prefix ${connection.prefix})`,
    phase: 'new',
  };

  return {
    async open() {
      // Nothing to load and nothing to wait for: a Redis that is down fails the first command instead.
      state.phase = 'open';
    },

    async get<T>(key: string) {
      let raw: unknown;
      try {
        raw = await connection.client.sendCommand(['GET', stateKey(state, key)]);
      } catch (error) {
        throw redisFailure(`read state key "${key}"`, error);
      }
      return raw === null || raw === undefined ? undefined : (JSON.parse(String(raw)) as T);
    },

    async set(key, value, writeOptions) {
      requireOpen(state, 'write');
      const json = JSON.stringify(value);
      if (json === undefined)
        throw new TypeError(`cannot store ${typeof value} under "${key}": values are JSON; use delete() to remove a key`);
      await write(state, key, json, writeOptions?.durable === true);
    },

    async delete(key) {
      requireOpen(state, 'write');
      await write(state, key, undefined);
    },

    keys: (prefix) => scanKeys(state, prefix),

    async flush() {
      // Every write is in Redis once it resolved.
    },

    async close() {
      // The connection is the agent's: it closes it after every user of it.
      if (state.phase === 'open') state.phase = 'closed';
    },

    describe: () => state.description,
  };
}
