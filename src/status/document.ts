/**
 * The shape of `GET /status.json`, version 1: what the status page shows, as data. Times are ISO
 * 8601 strings (UTC), durations milliseconds, counts numbers; a field the agent does not know is
 * `null`, never left out. A change that removes or retypes a field bumps `version`; new fields may
 * be added to version 1. docs/status-page.md documents every field.
 */

import type { ReminderInfo } from '../runtime/votes.js';

/** The current version of {@link StatusDocument}. */
export const STATUS_DOCUMENT_VERSION = 1;

/** One component of the readiness (`/readyz`). */
export interface StatusComponent {
  name: string;
  ready: boolean;
  /** Why it is not ready, or a short note when it is. */
  detail: string;
  /** When it last changed. */
  since: string;
}

/** The agent itself: the header of the page. */
export interface StatusAgent {
  /** The listing-agent version. */
  version: string;
  /** `embedded` (in a bot's process, or any code that made the agent) or `daemon` (`listing-agent run`). */
  mode: 'embedded' | 'daemon';
  /** `idle`, `starting`, `connecting`, `running`, `stopping`, `stopped`. */
  phase: string;
  startedAt: string | null;
  uptimeMs: number | null;
  /** The project the service answered as; null until it answered. */
  project: { id: string; name: string } | null;
  /** With `state.redis`: this agent's ID, whether it leads, and who does. Null without Redis. */
  cluster: { agentId: string; leader: boolean; leaderId: string | null } | null;
  /**
   * The state directory (a file store) and whether it takes writes: `problem` (`no_space`,
   * `read_only`, `denied`, `other`) and `reason` in words while it does not, and since when.
   * Null when the state is not in a directory (Redis, a store of the bot's own).
   */
  stateDirectory: { path: string; writable: boolean; problem: string | null; reason: string | null; since: string } | null;
  /** True when every component is ready (`/readyz` answers 200). */
  ready: boolean;
  components: StatusComponent[];
  /** The newest errors the agent reported (at most 10), newest first. */
  recentErrors: { at: string; message: string }[];
}

/** One sample of the counts, as posted. */
export interface StatusSample {
  /** When the counts were read. */
  at: string;
  servers: number;
  shards: number;
}

/** One post: a success (`ok`), a success after failed tries (`retried`), or a failure. */
export interface StatusPost {
  at: string;
  /** `v1`, `v1_batch` or `v0`. */
  target: string;
  outcome: 'ok' | 'retried' | 'failed';
  /** The newest counts sent; null for a failure. */
  servers: number | null;
  shards: number | null;
  /** Samples sent (a batch sends several); 0 for a failure. */
  samples: number;
  /** Why it failed (failures only). */
  error: string | null;
  /** When it is tried again (failures only). */
  retryAt: string | null;
}

/** The `stats` section. */
export interface StatusStats {
  /** `stats.enabled`. */
  enabled: boolean;
  /** The posted samples of the history window (`health.history`), oldest first. */
  samples: StatusSample[];
  /** The posts of the history window, oldest first. */
  posts: StatusPost[];
  /** When the next post is due: the retry of a failure, else the next regular post. */
  nextPostAt: string | null;
  /** Samples waiting to be sent after the last failure (null: no failure since the last success). */
  pendingSamples: number | null;
}

/** The `commands` section. */
export interface StatusCommands {
  enabled: boolean;
  lastSync: {
    at: string;
    /** Commands in the set. */
    count: number;
    /** The sha256 of the normalised set. */
    hash: string;
    /** True when the hash matched and nothing was sent. */
    skipped: boolean;
    /** `start`, `schedule` or `demand`. */
    reason: string;
    added: string[];
    removed: string[];
    changed: string[];
  } | null;
  lastFailure: { at: string; error: string } | null;
  /** The next check (`commands.interval` after the last one); null: only at start. */
  nextCheckAt: string | null;
}

/** One hook's outcome for one vote. */
export interface StatusHookOutcome {
  hook: string;
  /** `ok`; `retrying`: failed, a retry follows; `dead_letter`: gave up. */
  outcome: 'ok' | 'retrying' | 'dead_letter';
  /** Calls so far. */
  attempts: number;
  /** The last call's duration. */
  latencyMs: number;
  error: string | null;
}

/** One vote received. */
export interface StatusVote {
  key: string;
  /** The service user ID. */
  userId: string;
  /** The Discord ID, when known. */
  platformId: string | null;
  /** The voter's name, when the delivery carried it (webhooks). */
  name: string | null;
  /** `poll` (the votes cursor) or `webhook`. */
  source: string;
  /** When the vote was cast. */
  createdAt: string;
  /** When this agent recorded it. */
  receivedAt: string;
  /** One entry per hook that ran for it so far. */
  hooks: StatusHookOutcome[];
}

/** One dead letter: a vote a hook gave up on. */
export interface StatusDeadLetter {
  key: string;
  hook: string;
  userId: string;
  attempts: number;
  error: string;
  failedAt: string;
}

/** One vote reminder (`votes.reminders`): whose vote, and when its voter may vote again. */
export type StatusReminder = ReminderInfo;

/** The vote reminders (`votes.reminders`). */
export interface StatusReminders {
  /** `votes.reminders.enabled`, with the vote pipeline running. */
  enabled: boolean;
  /** How many are scheduled; null when off or when the schedule could not be read (Redis down). */
  scheduled: number | null;
  /** The next due (at most 10), soonest first. */
  next: StatusReminder[];
  /** The last handed to the hooks by this agent (or, with Redis, by the leader; at most 10), newest first. */
  lastSent: StatusReminder[];
}

/** The `votes` section. */
export interface StatusVotes {
  /** The vote pipeline runs (`votes.enabled` or `webhooks.enabled`). */
  enabled: boolean;
  /** The votes cursor is polled (`votes.enabled`). */
  polling: boolean;
  /** The newest votes received (at most 50), newest first. */
  recent: StatusVote[];
  /** Votes received per hour over the history window, oldest first (hours without votes included). */
  perHour: { hour: string; poll: number; webhook: number }[];
  /** The stored cursor: its position (opaque), the newest vote seen, when it last moved (seen by this page). */
  cursor: { position: string | null; newestVoteAt: string | null; movedAt: string | null } | null;
  /** Votes whose hooks are still running or waiting. */
  pending: number | null;
  /** Dead letters (at most 100 listed), oldest first; `deadLetterCount` is the total. */
  deadLetters: StatusDeadLetter[];
  deadLetterCount: number;
  /** The vote reminders (added in version 1: readers of older agents may find it missing). */
  reminders: StatusReminders;
}

/** The `webhooks` section. */
export interface StatusWebhooks {
  enabled: boolean;
  /**
   * Deliveries per outcome since `since` (an hour ago, or the agent's start when later):
   * `accepted`, `duplicate`, `bad_signature`, `stale`, `malformed`, `too_large`, `rejected`, `error`.
   */
  lastHour: Record<string, number>;
  since: string | null;
  /** Where the receiver listens. */
  receiverUrl: string | null;
  /** `webhooks.publicUrl`: the URL the service delivers to, when set. */
  publicUrl: string | null;
  /** The secrets accepted, by where they come from, and when the newest stored one was added (never a secret). */
  secrets: { configured: number; stored: number; newestStoredAt: string | null };
}

/** The whole document. */
export interface StatusDocument {
  version: typeof STATUS_DOCUMENT_VERSION;
  generatedAt: string;
  agent: StatusAgent;
  stats: StatusStats;
  commands: StatusCommands;
  votes: StatusVotes;
  webhooks: StatusWebhooks;
  /** Whether the actions (retry dead letters, post stats now) are on (`health.adminToken` is set). */
  actions: { enabled: boolean };
}
