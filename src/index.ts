/**
 * listing-agent's public surface. Every export is named here; nothing else is public.
 */

// The agent: embedded in a bot, or run by `listing-agent run`.
export { createListingAgent, ListingAgent, parseConfig } from './agent/agent.js';
export type { ListingAgentOptions, AgentConfigInput, AgentPhase } from './agent/agent.js';
export type { AgentEvents } from './agent/events.js';
export type { StatusDocument } from './status/document.js';
export type { AgentLogger } from './log/agent-logger.js';
export type { Capability, CapabilityContext } from './runtime/capability.js';
export type { Readiness, ComponentState } from './runtime/readiness.js';

// Configuration: the schema, the loader, the environment variables.
export { configSchema, SECRET_PATHS } from './config/schema.js';
export type { ListingAgentConfig, ListingAgentConfigInput } from './config/schema.js';
export { loadConfig, buildConfig } from './config/loader.js';
export type { LoadConfigOptions, LoadedConfig, ConfigSources } from './config/loader.js';
export { ConfigError } from './config/errors.js';
export { maskConfig, secretValues } from './config/mask.js';
export { configEnvironmentVariables } from './config/fields.js';
export type { ConfigEnvironmentVariable } from './config/fields.js';
export { buildConfigJsonSchema } from './config/json-schema.js';

// Stats: count sources and the poster.
export type { CountSource, CountReading } from './stats/source.js';
export type { PostResult, PostFailure, PostedSample, PostTarget } from './stats/events.js';
export { countSourceFor } from './stats/sources/detect.js';
export { createDiscordClientSource } from './stats/sources/discord-client.js';
export type { EmbeddedSourceOptions } from './stats/sources/discord-client.js';
export { createShardingManagerSource } from './stats/sources/sharding-manager.js';
export { createClusterManagerSource } from './stats/sources/hybrid-cluster.js';
export { createDiscordRestSource, DISCORD_REST_DEFAULTS } from './stats/sources/discord-rest.js';
export type { DiscordRestSourceOptions } from './stats/sources/discord-rest.js';
export { createPushSource, PUSH_DEFAULTS, pushShardCounts, PushRejectedError } from './stats/sources/push.js';
export type { PushSource, PushSourceOptions, PushShardCountsOptions, PushBody, ShardCountReport } from './stats/sources/push.js';
export { createStatsCapability } from './stats/capability.js';
export type { StatsCapability, StatsCapabilityOptions } from './stats/capability.js';
export { createStatsPoster } from './stats/poster.js';
export type { StatsPoster, StatsPosterOptions } from './stats/poster.js';
export { createSchedule } from './runtime/scheduler.js';
export type { Schedule, ScheduleOptions, ScheduleFactory } from './runtime/scheduler.js';
export { createConfiguredSource, SourceConfigError } from './stats/configured-source.js';
export { postStatsOnce } from './stats/post-once.js';

// Commands: sources, normalisation, diff, sync.
export type { CommandSource, CommandLoad, CommandDiff, CommandChange, CommandSyncResult, CommandSyncFailure, ListingCommand } from './commands/types.js';
export { normaliseCommands, hashCommands } from './commands/normalise.js';
export { diffCommands, formatDiff } from './commands/diff.js';
export { planCommandSync, syncCommands, COMMANDS_STATE_KEY, CommandSourceError } from './commands/sync.js';
export type { CommandSyncPlan, LastCommandSync } from './commands/sync.js';
export { createCommandsCapability } from './commands/capability.js';
export type { CommandsCapability } from './commands/capability.js';
export { commandsSourceFor } from './commands/configured-source.js';
export { createDiscordCommandsSource } from './commands/sources/discord-rest.js';
export { createClientCommandsSource } from './commands/sources/discord-client.js';
export { createFileCommandsSource } from './commands/sources/file.js';
export { createStaticCommandsSource } from './commands/sources/static.js';

// Votes: the poller, the pipeline and its ledgers, the hooks.
export type { Vote, VoteHook, HookCallContext, HookRun, VoteLedger, DeadLetter, LedgerEntry } from './votes/types.js';
export { voteKey } from './votes/types.js';
export { createVotePipeline } from './votes/pipeline.js';
export type { VotePipeline, VotePipelineOptions, IngestResult } from './votes/pipeline.js';
export { createFileVoteLedger } from './votes/ledger-file.js';
export type { FileVoteLedger, FileVoteLedgerOptions } from './votes/ledger-file.js';
export { createMemoryVoteLedger } from './votes/ledger-memory.js';
export { createVotePoller } from './votes/poller.js';
export type { VotePoller, VotePollerOptions } from './votes/poller.js';
export { createVotesCapability } from './votes/capability.js';
export type { VotesCapability, VotesCapabilityOptions } from './votes/capability.js';
export { createHasVoted } from './votes/has-voted.js';
export type { HasVoted, HasVotedOptions } from './votes/has-voted.js';
export { createHttpHook, createExecHook, createInProcessHook, hooksFromConfig, voteHookBody, VoteHookError } from './votes/hooks/index.js';
export type { HttpHookOptions, ExecHookOptions, InProcessHookOptions, VoteHookBody } from './votes/hooks/index.js';

// State stores.
export { createFileStore } from './store/file.js';
export type { FileStore, FileStoreOptions } from './store/file.js';
export { createMemoryStore } from './store/memory.js';
export { StoreError, FencedError } from './store/errors.js';
export type { StateStore, WriteOptions } from './store/types.js';

// Many machines: Redis (shared state and vote ledger), shard reports, the reward stream.
export { createRedisConnection, RedisUnavailableError, REDIS_CONNECTION_DEFAULTS } from './redis/connection.js';
export type { RedisConnection, RedisConnectionOptions, RedisConnectionEvents } from './redis/connection.js';
export { REDIS_KEYS } from './redis/keys.js';
export { createRedisStore } from './store/redis.js';
export type { RedisStoreOptions } from './store/redis.js';
export { createRedisVoteLedger } from './votes/ledger-redis.js';
export type { RedisVoteLedger, RedisVoteLedgerOptions } from './votes/ledger-redis.js';
export { createShardReporter, createRedisShardsSource } from './stats/sources/redis-shards.js';
export type { ShardReporter, ShardReporterOptions, RedisShardsSourceOptions } from './stats/sources/redis-shards.js';
export { ownShardsSourceFor } from './stats/sources/redis-shards-local.js';
export type { OwnShardsSource } from './stats/sources/redis-shards-reports.js';
export { createStreamHook, STREAM_HOOK_NAME, createVoteConsumer, VOTE_CONSUMER_DEFAULTS } from './votes/stream.js';
export type { StreamHook, StreamHookOptions, VoteConsumer, VoteConsumerOptions, StreamVoteContext } from './votes/stream.js';
export type { Leadership, LeadershipEvents } from './runtime/leadership.js';
export type { StoreFence } from './store/types.js';

// Health, metrics and logs.
export { createHealthServer } from './health/server.js';
export type { HealthServer, HealthServerOptions } from './health/server.js';
export { ListenError } from './http/listen-error.js';
export type { ListenAddress, ListenProblem } from './http/listen-error.js';
export { createAgentMetrics, collectProcessMetrics } from './runtime/metrics.js';
export type { AgentMetrics } from './runtime/metrics.js';
export { createLogger } from './log/logger.js';
export type { LoggerOptions } from './log/logger.js';

// The listing-service client (v1, v0, OAuth 2.1).
export * from './api/index.js';

// The error family's root.
export { ListingAgentError, ValidationError } from './errors.js';
export type { FieldIssue } from './errors.js';

// The local emulator of the listing service.
export { startEmulator, DEFAULT_SETTINGS, DEFAULT_SEED, seedSchema } from './emulator/index.js';
export type {
  StartEmulatorOptions,
  RunningEmulator,
  EmulatorUrls,
  EmulatorAdmin,
  AdminGrant,
  AdminProject,
  AdminUser,
  AdminVote,
  EmulatorSettings,
  EmulatorSeed,
} from './emulator/index.js';

// The contract's rules, shared by every part.
export {
  CONTRACT_LIMITS,
  DECISION_DEFAULTS,
  SUPPORTED_LOCALES,
  ANNOUNCEMENT_CATEGORIES,
  SCOPES,
  PLATFORM_TYPES,
  SERVICE_SOURCE,
  VOTE_SOURCES,
  SIGNATURE_HEADER,
  TRACE_HEADER,
} from './contract/limits.js';
export type { SupportedLocale, AnnouncementCategory, Scope, Platform, ProjectType, VoteSource } from './contract/limits.js';
export { decodeProjectToken } from './contract/project-token.js';
export type { ProjectTokenPayload, DecodedProjectToken, ProjectTokenProblem } from './contract/project-token.js';

// Signed webhook deliveries: verify (pure), the receiver, adapters for Express and Fastify.
export { signDelivery, computeSignature } from './contract/signature.js';
export type { SignDeliveryOptions } from './contract/signature.js';
export { verifyDelivery, verifyLegacyAuthorization, parseLegacyVote, parseSignatureHeader, DEFAULT_SIGNATURE_TOLERANCE_SECONDS } from './webhooks/verify.js';
export type { VerifyDeliveryOptions, VerifyResult, VerifiedDelivery, RejectedDelivery, VerifyFailure, WebhookHeaders } from './webhooks/verify.js';
export type { WebhookEvent, WebhookEventType, VoteCreateData, LegacyVote } from './webhooks/events.js';
export { expressWebhookHandler, fastifyWebhookHandler, handleWebhookDelivery } from './webhooks/adapters.js';
export type { WebhookHandlerOptions } from './webhooks/adapters.js';
export { createWebhookReceiver } from './webhooks/receiver.js';
export { createWebhookSecrets, recordRotatedSecret } from './webhooks/secrets.js';
export { createWebhooksCapability } from './webhooks/capability.js';
