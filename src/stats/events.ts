/** Where a post went. */
export type PostTarget = 'v1' | 'v1_batch' | 'v0';

/** One sample as posted: the counts and when they were measured. */
export interface PostedSample {
  /** ISO 8601. */
  timestamp: string;
  serverCount: number;
  shardCount: number;
}

/** What `posted` carries: what was sent where. */
export interface PostResult {
  target: PostTarget;
  /** The samples sent (one for `v1` and `v0`; the batch's entries for `v1_batch`), oldest first. */
  samples: PostedSample[];
  /** Per-shard counts sent to v0, when known. */
  shards?: number[];
  /** When the next regular post is due, epoch ms. */
  nextPostAt?: number;
  /** Failed tries of this target right before this success (absent: none, the post went through at once). */
  afterFailures?: number;
}

/** What `postFailed` carries: what was tried, why it failed, and what happens next. */
export interface PostFailure {
  target: PostTarget;
  error: Error;
  /** Samples kept for the next try (nothing is dropped on a failure). */
  pendingSamples: number;
  /** When the next try is, in epoch ms. */
  retryAt: number;
}

/** The events the stats capability emits, as the agent's (`agent.on('posted', ...)`). */
export interface StatsEvents {
  /** Counts were posted (v1 metrics, a v1 batch, or v0 stats). */
  posted: [result: PostResult];
  /** A post failed; the samples are kept and retried. */
  postFailed: [failure: PostFailure];
}
