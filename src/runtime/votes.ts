/*
 * What the roads and the status page share of the vote pipeline: the pipeline itself lives with
 * the votes capability; what the receiver needs of it is {@link VoteSink}. The vote's own shape is
 * `contract/vote.ts`.
 */
import type { Vote, VoteRoad } from '../contract/vote.js';

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
