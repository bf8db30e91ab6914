/**
 * `listing-agent/runtime`: what the agent is built from, for a bot that adds its own capability
 * (the `capabilities` option) or runs parts alone: the capability contract, readiness, the health
 * server with `/metrics`, the metrics, the logger, and the state stores.
 *
 * @packageDocumentation
 */
export type { Capability, CapabilityContext, EventMap, ServiceProject } from '../runtime/capability.js';
export type { Readiness, ComponentState } from '../runtime/readiness.js';
export { createHealthServer } from '../health/server.js';
export type { HealthServer, HealthServerOptions, HealthPages } from '../health/server.js';
export type {
  StatusDocument,
  StatusAgent,
  StatusComponent,
  StatusStats,
  StatusSample,
  StatusPost,
  StatusCommands,
  StatusVotes,
  StatusVote,
  StatusHookOutcome,
  StatusDeadLetter,
  StatusReminders,
  StatusReminder,
  StatusWebhooks,
} from '../status/document.js';
export type { ReminderInfo } from '../runtime/votes.js';
export type { ListenAddress, ListenProblem } from '../http/listen-error.js';
export { createAgentMetrics, collectProcessMetrics } from '../runtime/metrics.js';
export type { AgentMetrics } from '../runtime/metrics.js';
export { createLogger } from '../log/logger.js';
export type { LoggerOptions } from '../log/logger.js';
export { createFileStore } from '../store/file.js';
export type { FileStore, FileStoreOptions } from '../store/file.js';
export { createMemoryStore } from '../store/memory.js';
export { StoreError, FencedError } from '../store/errors.js';
export type { StateStore, WriteOptions } from '../store/types.js';
export type { WriteHealth, WriteHealthState, WriteProblem } from '../store/write-health.js';

// The types that the signatures above name, so that a bot can name them too.
export type { Delay } from '../contract/timer-delay.js';
export type { ListenSetting } from '../http/listen-error.js';
export type { LocalServerStopOptions, LocalServerTimeouts } from '../http/local-server.js';
export type { LabeledCounter, LabeledGauge, Labels } from '../runtime/labeled.js';
export type {
  ClusterStatus,
  CommandSyncsLabels,
  DELIVERY_OUTCOMES,
  HOOK_RESULTS,
  HookRunsLabels,
  POST_RESULTS,
  POST_TARGETS,
  PostsLabels,
  REMINDER_RESULTS,
  SYNC_RESULTS,
  VOTE_ROADS,
  VoteLedgerSizes,
  VotesReceivedLabels,
  WebhookDeliveriesLabels,
} from '../runtime/metrics-recorder.js';
export type { Schedule, ScheduleFactory, ScheduleOptions } from '../runtime/scheduler.js';
export type { VoteSink } from '../runtime/votes.js';
export type { STATUS_DOCUMENT_VERSION } from '../status/document.js';
export type { StoreRecovery } from '../store/file-state.js';
export type { FileStoreStats } from '../store/file.js';
export type { FileStoreFs, FileStoreHandle } from '../store/fs.js';
export type { LockOwner } from '../store/lock.js';
export type { Probe } from '../store/write-health.js';
