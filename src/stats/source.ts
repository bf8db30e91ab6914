/**
 * What a count source knows right now. A source says why a count is not ready rather than
 * guessing: a 0 because a cache is still filling must never be posted.
 */
export type CountReading =
  | {
      ready: true;
      /** Servers (guilds) the whole bot is in. */
      serverCount: number;
      /** Shards the whole bot runs. */
      shardCount: number;
      /** Servers per shard, indexed by shard ID, when the source knows them. */
      shards?: number[];
    }
  | { ready: false; reason: string };

/**
 * One small interface behind every way of counting: a discord.js Client, a ShardingManager, a
 * hybrid ClusterManager, Discord's REST API, or reports pushed by the bot.
 */
export interface CountSource {
  /** What it is, for logs and `/readyz` (`discord.js Client (2 shards)`). */
  readonly description: string;
  /** Reads the counts; never throws for an expected condition (it answers `ready: false`). */
  read(signal?: AbortSignal): Promise<CountReading>;
  /**
   * Opens what the source needs (the push endpoint's port). Default: nothing. Called again after `stop()` when the stats capability
   * starts again.
   */
  start?(): Promise<void>;
  /** Releases it; `start()` may follow. Default: nothing. */
  stop?(): Promise<void>;
  /**
   * Optional: calls `listener` whenever the reading may have changed (a report arrived), so
   * that a poster waiting for the first ready counts reads at once instead of at its next poll.
   * A hint, not a reading: the listener reads with `read()`, and a source may call it when nothing
   * changed. It is called synchronously and must not throw. Returns the unsubscribe function.
   * Without it, a not-ready source is polled (the poster's `readyPollMs`, default 5 s).
   */
  onChange?(listener: () => void): () => void;
}
