import type { WriteHealth } from './write-health.js';

/** Options of a write. */
export interface WriteOptions {
  /**
   * Resolve only once the change is on disk (or in Redis). Default false: the write is batched and
   * reaches disk within the store's flush delay, and at `flush()`/`close()`.
   */
  durable?: boolean;
}

/**
 * Where the agent keeps what must survive a restart: the votes cursor, pending and done vote keys,
 * the command hash, the metrics buffer. Values are JSON. Keys are strings such as `votes:cursor`.
 * The file store is the default; a Redis store shares the state between machines.
 */
export interface StateStore {
  /** Loads the state (and creates its home); throws a `StoreError` saying what to fix. */
  open(): Promise<void>;
  get<T = unknown>(key: string): Promise<T | undefined>;
  set(key: string, value: unknown, options?: WriteOptions): Promise<void>;
  delete(key: string, options?: WriteOptions): Promise<void>;
  /** Keys starting with `prefix`, in no particular order. */
  keys(prefix: string): Promise<string[]>;
  /** Writes every pending change. */
  flush(): Promise<void>;
  /** Flushes and releases the store. */
  close(): Promise<void>;
  /** What the store is, for logs and `/readyz` (`file /var/lib/listing-agent/state.json`). */
  describe(): string;
  /**
   * What the last `open()` found wrong and fixed by itself (a corrupt state file set aside, a stale
   * lock taken over), one sentence each, for the agent to log at `warn`. Optional: stores that never
   * repair anything leave it out.
   */
  warnings?(): readonly string[];
  /**
   * Whether the store's directory takes writes (the file store): a failed write marks it
   * unwritable with the reason in words, and a probe on a backoff marks it writable again. The
   * agent's `store` readiness, the status page and `listing_agent_state_writable` follow it.
   * Absent: a store with no directory (memory, Redis).
   */
  readonly writeHealth?: WriteHealth;
}

/** The fencing a state store checks on each write of a leader-only key. */
export interface StoreFence {
  /** The token this agent's lease carries, or undefined when it does not lead. */
  token(): number | undefined;
  /** Whether `key` is written by the leader alone (the votes cursor, the command hash, the metrics buffer). */
  applies(key: string): boolean;
}
