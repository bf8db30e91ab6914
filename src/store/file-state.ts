import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { createCommitter, type Committer } from './committer.js';
import { StoreError } from './errors.js';
import { nodeFileStoreFs, type FileStoreFs, type FileStoreHandle } from './fs.js';
import type { LockOwner, StateLock } from './lock.js';
import { createWriteHealth, type WriteHealth } from './write-health.js';

/**
 * What a file store holds, as one plain object: its options with the defaults applied, and what
 * changes while it is open. `file-write.ts` and `file-open.ts` are module functions over it;
 * `file.ts` is the {@link StateStore}-shaped shell around them.
 */

/** Options of `createFileStore`. */
export interface FileStoreOptions {
  /** The directory (created if missing, mode 0700); the state is `<directory>/state.json`. */
  directory: string;
  /** How long a non-durable write may wait before it reaches disk. Default 1000 ms. */
  flushDelayMs?: number;
  /** Who takes `state.lock` (the CLI passes `process.pid` and the host name). Default: unnamed. */
  owner?: LockOwner;
  /**
   * Tells whether a pid on this host still runs (the CLI uses `process.kill(pid, 0)`). With it, a
   * lock left by a dead agent on this host is taken over at once and a live one refuses the open.
   * Without it, a lock is taken over once its heartbeat is older than `lockStaleMs`.
   */
  isProcessAlive?: (pid: number) => boolean;
  /**
   * Which process of a sharded bot the agent runs in (`shard 1 of 2`), written into `state.lock`
   * with this host's name: an agent that finds the lock held by such a process on this host says
   * to create the agent in the manager's process, not in each shard. Default: none.
   */
  botProcess?: string;
  /** How old a lock's heartbeat must be for the lock to count as abandoned. Default 15 000 ms. */
  lockStaleMs?: number;
  /** The file system. Default: `node:fs/promises` (tests inject failures and counters). */
  fs?: FileStoreFs;
  /** Current time in epoch ms (lock times, names of set-aside files). Default `Date.now`. */
  now?: () => number;
  /** The backoff of the write health's probe while the directory cannot be written. Default 500 ms doubling up to 5 s. */
  probeDelays?: { firstMs: number; maxMs: number };
  /**
   * The setting that moves the directory, as the messages name it (`set <setting> to a writable
   * directory`). Default `state.directory (LISTING_AGENT_STATE_DIRECTORY)`; an embedded agent
   * passes `state.directory`: it reads no variable.
   */
  setting?: string;
}

/** A corrupt state file found by `open()` and set aside. */
export interface StoreRecovery {
  /** Why the file was rejected (`not JSON (...)`). */
  reason: string;
  /** Where the corrupt file now is (`state.json.corrupt-<timestamp>`). */
  movedTo: string;
  /** What the store started from: the previous good generation, or nothing. */
  restoredFrom: 'previous' | 'empty';
}

const DEFAULT_FLUSH_DELAY_MS = 1_000;
/** Default of {@link FileStoreOptions.lockStaleMs}: 15 s. */
export const DEFAULT_LOCK_STALE_MS = 15_000;
/** What the temporary files next to `state.json` have in their names (`state.json.tmp-…`). */
export const TMP_MARK = '.tmp-';

/** The state of one file store. */
export interface FileStoreState {
  readonly options: FileStoreOptions;
  readonly directory: string;
  readonly fs: FileStoreFs;
  readonly now: () => number;
  readonly flushDelayMs: number;
  /** `<directory>/state.json`. */
  readonly path: string;
  /** `state.json.prev`: the generation before the last write. */
  readonly previousPath: string;
  /** Serialises and coalesces whole-document writes. */
  readonly committer: Committer;
  /** Whether the directory takes writes; shared with the file vote ledger on the same directory. */
  readonly health: WriteHealth;
  /** Removes the store's probe from the health (while open). */
  removeProbe: (() => void) | undefined;
  phase: 'new' | 'opening' | 'open' | 'closing' | 'closed';
  /** The state in memory: each key with its value as JSON text. */
  entries: Map<string, string>;
  lock: StateLock | undefined;
  directoryHandle: FileStoreHandle | undefined;
  /** False once the file system refused a hard link: no `state.json.prev` is kept then. */
  keepPrevious: boolean;
  /** state.json is a corrupt file already set aside: it must not become `state.json.prev`. */
  corruptInPlace: boolean;
  /** The flush timer of non-durable writes. */
  timer: NodeJS.Timeout | undefined;
  warnings: string[];
  recovered: StoreRecovery | undefined;
  closing: Promise<void> | undefined;
}

/**
 * A new, closed file store state; `write` is the committer's whole-document write (given the
 * state, it takes its snapshot synchronously).
 */
export function createFileStoreState(options: FileStoreOptions, write: (state: FileStoreState) => Promise<void>): FileStoreState {
  const path = join(options.directory, 'state.json');
  const fs = options.fs ?? nodeFileStoreFs;
  const now = options.now ?? Date.now;
  const state: FileStoreState = {
    options,
    directory: options.directory,
    fs,
    now,
    flushDelayMs: options.flushDelayMs ?? DEFAULT_FLUSH_DELAY_MS,
    path,
    previousPath: `${path}.prev`,
    committer: createCommitter(async () => {
      try {
        await write(state);
      } catch (error) {
        state.health.failed(error);
        throw error;
      }
      state.health.succeeded();
    }),
    health: createWriteHealth({
      directory: options.directory,
      fs,
      now,
      ...(options.probeDelays ? { probeDelays: options.probeDelays } : {}),
    }),
    removeProbe: undefined,
    phase: 'new',
    entries: new Map(),
    lock: undefined,
    directoryHandle: undefined,
    keepPrevious: true,
    corruptInPlace: false,
    timer: undefined,
    warnings: [],
    recovered: undefined,
    closing: undefined,
  };
  return state;
}

/** A fresh temporary name next to `state.json` (`state.json.tmp-<tag><random>`). */
export function tmpName(state: FileStoreState, tag = ''): string {
  return `${state.path}${TMP_MARK}${tag}${randomBytes(6).toString('hex')}`;
}

/** Throws a `StoreError` saying why, unless the store is open. */
export function requireOpen(state: FileStoreState, action: string): void {
  if (state.phase === 'open') return;
  const why = state.phase === 'new' || state.phase === 'opening' ? 'call open() first' : 'the store is closed';
  throw new StoreError(`cannot ${action} ${state.path}: ${why}`, state.path);
}
