import type { StoreFence } from '../leader/types.js';
import type { RedisConnection } from '../redis/connection.js';
import type { StateStore } from './types.js';

/** Options of {@link createRedisStore}. */
export interface RedisStoreOptions {
  /** The agent's Redis connection (started by the caller). */
  connection: RedisConnection;
  /** Fencing of leader-only keys. Default: none (every write allowed). */
  fence?: StoreFence;
}

/** The state store in Redis (`state.redis`): shared by every agent of the bot. */
export function createRedisStore(options: RedisStoreOptions): StateStore {
  void options;
  throw new Error('createRedisStore: not implemented yet');
}
