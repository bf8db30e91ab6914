import { fsReason } from './errors.js';
import { closeFileStore, openFileStore } from './file-open.js';
import { createFileStoreState, type FileStoreOptions, requireOpen, type StoreRecovery } from './file-state.js';
import { writeChange, writeDocument } from './file-write.js';
import type { StateStore } from './types.js';
import type { WriteHealth } from './write-health.js';

export { DEFAULT_LOCK_STALE_MS, type FileStoreOptions,  } from './file-state.js';

/** Counters of a file store, for tests, benchmarks and `/metrics`. */
export interface FileStoreStats {
  /** Whole-file writes that reached the disk. */
  writes: number;
  /** Writes that failed (kept in memory, retried by the next write). */
  failedWrites: number;
  /** The message of the last failed write, until a write succeeds. */
  lastError: string | undefined;
  /** Changes in memory not yet on disk. */
  pending: boolean;
  /** Keys in the state. */
  keys: number;
}

/** The file store: a {@link StateStore} plus what it found on open and what it did since. */
export interface FileStore extends StateStore {
  /** The state file (`<directory>/state.json`). */
  readonly path: string;
  /** Set when `open()` found a corrupt state file and set it aside. */
  readonly recovered: StoreRecovery | undefined;
  /** What the last `open()` fixed by itself (a corrupt file, a stale lock), for the agent to log. */
  warnings(): readonly string[];
  /** Whether the directory takes writes (see `StateStore.writeHealth`). */
  readonly writeHealth: WriteHealth;
  stats(): FileStoreStats;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * The default state store: one JSON document `<directory>/state.json` (`{ version: 1, data }`).
 *
 * - `set`/`delete` change memory at once. A durable write resolves once the file is on disk; other
 *   writes reach it within `flushDelayMs`. Every write is atomic: a temporary file is written and
 *   fsynced, the previous generation is kept as `state.json.prev` (a hard link), the temporary file
 *   is renamed over `state.json`, and the directory is fsynced. Writes are serialised and
 *   coalesced: callers arriving during a write share the next one (group commit).
 * - A failed write rejects its durable callers with a `StoreError`, keeps the change in memory and
 *   is retried by the next write (or the flush timer).
 * - `open()` never replaces a corrupt state file silently: it moves it to
 *   `state.json.corrupt-<timestamp>`, restores `state.json.prev` when that is good (else starts
 *   empty), and reports it through `recovered`, `describe()` and `warnings()`. A file written by a
 *   newer version is left alone and `open()` throws.
 * - `state.lock` keeps two agents off one directory (see {@link FileStoreOptions.isProcessAlive}).
 * - `writeHealth` says whether the directory takes writes: a failed write marks it unwritable with
 *   the reason (a full disk, a read-only file system), and a probe on a backoff (500 ms doubling
 *   to 5 s) marks it writable again. The file vote ledger on the same directory shares it.
 */
export function createFileStore(options: FileStoreOptions): FileStore {
  const state = createFileStoreState(options, writeDocument);
  const { path, committer } = state;
  const store: FileStore = {
    path,
    get recovered() {
      return state.recovered;
    },
    warnings: () => [...state.warnings],
    writeHealth: state.health,
    open: () => openFileStore(state),

    async get<T>(key: string) {
      const json = state.entries.get(key);
      return json === undefined ? undefined : (JSON.parse(json) as T);
    },

    async set(key, value, writeOptions) {
      requireOpen(state, 'write');
      const json = JSON.stringify(value);
      if (json === undefined)
        throw new TypeError(`cannot store ${typeof value} under "${key}": values are JSON; use delete() to remove a key`);
      state.entries.set(key, json);
      return writeChange(state, writeOptions);
    },

    async delete(key, writeOptions) {
      requireOpen(state, 'write');
      if (!state.entries.delete(key)) return writeOptions?.durable === true ? committer.commit() : undefined;
      return writeChange(state, writeOptions);
    },

    async keys(prefix) {
      return [...state.entries.keys()].filter((key) => key.startsWith(prefix));
    },

    async flush() {
      requireOpen(state, 'flush');
      await committer.commit();
    },

    close: () => closeFileStore(state),
    [Symbol.asyncDispose]: () => store.close(),

    describe() {
      const note = state.recovered ? ` (recovered: a corrupt state file was moved to ${state.recovered.movedTo})` : '';
      return `file ${path}${note}`;
    },

    stats() {
      const counters = committer.stats();
      return {
        writes: counters.writes,
        failedWrites: counters.failedWrites,
        lastError: counters.lastError === undefined ? undefined : fsReason(counters.lastError),
        pending: committer.pending,
        keys: state.entries.size,
      };
    },
  };
  return store;
}
