/*
 * A vote, as every part of the agent shares it: the votes cursor and the webhook receiver make
 * them, the vote pipeline records and rewards them. The pipeline itself lives with the votes
 * capability; what the receiver needs of it is {@link VoteSink}.
 */

/** Which road brought a vote: the votes cursor (`poll`) or a signed delivery (`webhook`). */
export type VoteRoad = 'poll' | 'webhook';

/**
 * A vote as the pipeline sees it, from either road (the votes cursor or a signed delivery). Its
 * `key` identifies it on both roads (decisions.md: `<user_id>:<created_at epoch ms>`).
 */
export interface Vote {
  /** `<user_id>:<created_at epoch ms>`: the dedupe key and every hook call's idempotency key. */
  key: string;
  /** The voter's service user ID. */
  userId: string;
  /** The voter's platform (Discord) ID, when known. */
  platformId: string | null;
  /** The service project ID the vote is for. */
  projectId: string;
  weight: number;
  /** ISO 8601. */
  createdAt: string;
  /** ISO 8601: when the user may vote again. */
  expiresAt: string;
  /** Which road brought it first. */
  road: VoteRoad;
  /** The delivery's `data.id` (webhooks only). */
  voteId?: string;
  /** The voter's name and avatar (webhooks only). */
  user?: { name: string | null; avatarUrl: string | null };
}

/** What the caller of `VotePipeline.ingest` knows of a batch besides its votes (for the log lines). */
export interface IngestDetails {
  /** The delivery's trace ID (`x-topgg-trace`), for a signed webhook. */
  traceId?: string;
}

/** What `VotePipeline.ingest` did with a batch. */
export interface IngestResult {
  /** Votes recorded as pending now: their hooks will run. */
  accepted: Vote[];
  /** Votes whose key was known already (from either road, or twice in the batch). */
  duplicates: number;
}

/**
 * Where votes go: the vote pipeline, as a road sees it. `ingest` resolves once the new votes are
 * durably pending (their hooks run after), and rejects when they cannot be recorded.
 */
export interface VoteSink {
  ingest(votes: readonly Vote[], road: VoteRoad, details?: IngestDetails): Promise<IngestResult>;
}

/** What `voteHookRan` carries: one call of one hook for one vote, and how it went. */
export interface HookRun {
  /** The vote key. */
  key: string;
  hook: string;
  /** 1 for the first call, 2 for the first retry, ... */
  attempt: number;
  /** `ok`; `error`: failed, a retry follows; `dead_letter`: failed, and that was the last retry. */
  result: 'ok' | 'error' | 'dead_letter';
  /** How long the call took, ms. */
  durationMs: number;
  /** The failure, secrets removed (not for `ok`). */
  error?: string;
}

/**
 * One vote reminder (`votes.reminders`): whose vote, and when its voter may vote again. The votes
 * capability makes them, the status page and the CLI list them (the status document names it
 * `StatusReminder`), so it is declared here, below both.
 */
export interface ReminderInfo {
  /** The reminded vote's key (`<user_id>:<created_at ms>`). */
  voteKey: string;
  /** The service user ID. */
  userId: string;
  /** The Discord ID, when known. */
  platformId: string | null;
  /** The project's service ID. */
  projectId: string;
  /** ISO 8601: when the vote expires (the voter may vote again). */
  expiresAt: string;
  /** ISO 8601: when the reminder is (or was) due: `expiresAt` + `votes.reminders.delay`. */
  dueAt: string;
}
