import { CONTRACT_LIMITS, DECISION_DEFAULTS } from '../contract/limits.js';

/** Tunable numbers of the emulator; defaults are the contract's and decisions.md's values. */
export interface EmulatorSettings {
  /** Also accept `http://127.0.0.1`, `http://localhost` and `http://[::1]` webhook URLs. Default false. */
  allowHttpLoopback: boolean;
  /** Votes per page of `GET /projects/:id/votes`. Default 100. */
  votesPageSize: number;
  /** Seconds from `created_at` to `expires_at`. Default 43200 (12 h). */
  voteExpirySeconds: number;
  /** Webhooks per project, integration webhooks included. Default 5. */
  webhooksPerProject: number;
  /** v1 requests per second per credential. Default 100. */
  v1RequestsPerSecond: number;
  /** v1 metrics and commands requests per minute per project. Default 60. */
  v1ProjectWritesPerMinute: number;
  /** v0 `/bots/*` requests per minute per token. Default 60. */
  v0BotRequestsPerMinute: number;
  /** Seconds between two announcements. Default 14400 (4 h). */
  announcementCooldownSeconds: number;
  /** Projects scanned per page of `GET /projects` with an application token. Default 100. */
  applicationTokenProjectsPageSize: number;
  /** How long a delivery waits for a 2xx, in milliseconds. Default 5000. */
  deliveryTimeoutMs: number;
  /** Delays before each retry of a delivery after a timeout or 5xx. Default [1000, 2000, 4000]. */
  deliveryRetryDelaysMs: readonly number[];
  /** Largest request body accepted, in bytes; larger bodies get 413. Default 4 MiB. */
  maxBodyBytes: number;
  /** Requests kept in the request log. Default 10000. */
  requestLogSize: number;
  /** Seconds after which a votes cursor expires (400), or null for never. Default null. */
  cursorTtlSeconds: number | null;
}

/** The defaults of {@link EmulatorSettings}. */
export const DEFAULT_SETTINGS: EmulatorSettings = {
  allowHttpLoopback: false,
  votesPageSize: DECISION_DEFAULTS.votesPageSize,
  voteExpirySeconds: DECISION_DEFAULTS.voteExpirySeconds,
  webhooksPerProject: DECISION_DEFAULTS.webhooksPerProject,
  v1RequestsPerSecond: DECISION_DEFAULTS.v1RequestsPerSecondPerCredential,
  v1ProjectWritesPerMinute: DECISION_DEFAULTS.v1ProjectWritesPerMinute,
  v0BotRequestsPerMinute: CONTRACT_LIMITS.v0BotRequestsPerMinute,
  announcementCooldownSeconds: CONTRACT_LIMITS.announcementCooldownSeconds,
  applicationTokenProjectsPageSize: CONTRACT_LIMITS.applicationTokenProjectsPageSize,
  deliveryTimeoutMs: DECISION_DEFAULTS.deliveryTimeoutMs,
  deliveryRetryDelaysMs: DECISION_DEFAULTS.deliveryRetryDelaysMs,
  maxBodyBytes: 4 * 1024 * 1024,
  requestLogSize: 10_000,
  cursorTtlSeconds: null,
};
