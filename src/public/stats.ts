/**
 * `listing-agent/stats`: where server and shard counts come from, and posting them without the
 * agent. The agent picks a source from `stats.source` and the `discord` option; use these to give
 * it your own (`countSource`), to push counts from another process, or to post once from a script.
 *
 * ```ts
 * import { pushShardCounts } from 'listing-agent/stats';
 * await pushShardCounts({ url: 'http://127.0.0.1:9466/stats', key, reports: { shards: [1200, 1185] } });
 * ```
 *
 * @packageDocumentation
 */
export type { CountSource, CountReading } from '../stats/source.js';
export type { PostResult, PostFailure, PostedSample, PostTarget } from '../stats/events.js';
export { createDiscordClientSource } from '../stats/sources/discord-client.js';
export type { EmbeddedSourceOptions } from '../stats/sources/discord-client.js';
export { createShardingManagerSource } from '../stats/sources/sharding-manager.js';
export { createClusterManagerSource } from '../stats/sources/hybrid-cluster.js';
export { createErisClientSource, createOceanicClientSource } from '../stats/sources/eris-oceanic.js';
export { createDiscordRestSource, DISCORD_REST_DEFAULTS } from '../stats/sources/discord-rest.js';
export type { DiscordRestSourceOptions } from '../stats/sources/discord-rest.js';
export { createPushSource, PUSH_DEFAULTS, pushShardCounts, PushRejectedError } from '../stats/sources/push.js';
export type { PushSource, PushSourceOptions, PushShardCountsOptions, PushBody, ShardCountReport } from '../stats/sources/push.js';
export { createStatsPoster } from '../stats/poster.js';
export type { StatsPoster, StatsPosterOptions } from '../stats/poster.js';
export { SourceConfigError } from '../stats/configured-source.js';
export { postStatsOnce } from '../stats/post-once.js';
export type { PostOnceOptions, PostOnceResult } from '../stats/post-once.js';

// The types that the signatures above name, so that a bot can name them too.
export type { DiscordConnectionOptions } from '../discord/rest.js';
export type { StatsEvents } from '../stats/events.js';
export type { PlannedPost, PostOutcome } from '../stats/post-once.js';
export type { StatsConfig } from '../stats/poster-options.js';
export type { Sample } from '../stats/samples.js';
export type {
  CacheLike,
  ClusterClientLike,
  DiscordClientLike,
  GuildLike,
  ProbedClient,
  ShardClientUtilLike,
  WebSocketShardLike,
} from '../stats/sources/discord-client.js';
export type { ErisClientLike, GatewayShardLike, KeyedLike, OceanicClientLike } from '../stats/sources/eris-oceanic.js';
export type { ClusterLike, ClusterManagerLike } from '../stats/sources/hybrid-cluster.js';
export type { OwnShardsReading } from '../stats/sources/redis-shards-reports.js';
export type { ManagedShardLike, ShardingManagerLike } from '../stats/sources/sharding-manager.js';
