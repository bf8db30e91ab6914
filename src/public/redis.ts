/**
 * `listing-agent/redis`: many machines on one Redis. The connection, the shared state store and
 * vote ledger, shard reports summed by the leader, and the reward stream with its consumer.
 * `@redis/client` loads only when one of these is used.
 *
 * @packageDocumentation
 */
export { createRedisConnection, RedisServerError, RedisUnavailableError, REDIS_CONNECTION_DEFAULTS } from '../redis/connection.js';
export type {
  RedisConnection,
  RedisConnectionOptions,
  RedisConnectionEvents,
  RedisClusterNodes,
  RedisSentinelOptions,
  RedisTlsOptions,
} from '../redis/connection.js';
export type { RedisServer, RedisServerRole } from '../redis/server.js';
export { REDIS_KEYS } from '../redis/keys.js';
export { createRedisStore } from '../store/redis.js';
export type { RedisStoreOptions } from '../store/redis.js';
export { createRedisVoteLedger } from '../votes/ledger-redis.js';
export type { RedisVoteLedger, RedisVoteLedgerOptions } from '../votes/ledger-redis.js';
export { createShardReporter, createRedisShardsSource } from '../stats/sources/redis-shards.js';
export type { ShardReporter, ShardReporterOptions, RedisShardsSourceOptions } from '../stats/sources/redis-shards.js';
export { ownShardsSourceFor } from '../stats/sources/redis-shards-local.js';
export type { OwnShardsSource } from '../stats/sources/redis-shards-reports.js';
export { createStreamHook, STREAM_HOOK_NAME, createVoteConsumer, VOTE_CONSUMER_DEFAULTS } from '../votes/stream.js';
export type { StreamHook, StreamHookOptions, VoteConsumer, VoteConsumerOptions, StreamVoteContext } from '../votes/stream.js';
export type { Leadership, LeadershipEvents } from '../runtime/leadership.js';
export type { StoreFence } from '../store/types.js';

// The types that the signatures above name, so that a bot can name them too.
export type { RedisClient, RedisScript } from '../redis/connection-types.js';
