import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { createCommitter } from './committer.js';
import { parseStateDocument, serializeStateDocument } from './document.js';
import { errnoCode, fsReason, StoreError, STATE_DIRECTORY_SETTING } from './errors.js';
import { nodeFileStoreFs, type FileStoreFs, type FileStoreHandle } from './fs.js';
import { acquireStateLock, type LockOwner, type StateLock } from './lock.js';
import type { StateStore, WriteOptions } from './types.js';

/** Options of {@link createFileStore}. */
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
  /** How old a lock's heartbeat must be for the lock to count as abandoned. Default 15 000 ms. */
  lockStaleMs?: number;
  /** The file system. Default: `node:fs/promises` (tests inject failures and counters). */
  fs?: FileStoreFs;
  /** Current time in epoch ms (lock times, names of set-aside files). Default `Date.now`. */
  now?: () => number;
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
  stats(): FileStoreStats;
  [Symbol.asyncDispose](): Promise<void>;
}

const DEFAULT_FLUSH_DELAY_MS = 1_000;
/** Default of {@link FileStoreOptions.lockStaleMs}: 15 s. */
export const DEFAULT_LOCK_STALE_MS = 15_000;
const TMP_MARK = '.tmp-';
/** Directory fsync is not supported everywhere (Windows, some FUSE file systems); losing it is not fatal. */
const NO_DIRECTORY_SYNC = new Set(['EISDIR', 'EPERM', 'EINVAL', 'ENOTSUP', 'EBADF', 'EACCES']);

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
 */
export function createFileStore(options: FileStoreOptions): FileStore {
  const { directory } = options;
  const fs = options.fs ?? nodeFileStoreFs;
  const now = options.now ?? Date.now;
  const flushDelayMs = options.flushDelayMs ?? DEFAULT_FLUSH_DELAY_MS;
  const path = join(directory, 'state.json');
  const previousPath = `${path}.prev`;

  let phase: 'new' | 'opening' | 'open' | 'closing' | 'closed' = 'new';
  let entries = new Map<string, string>();
  let lock: StateLock | undefined;
  let directoryHandle: FileStoreHandle | undefined;
  let keepPrevious = true;
  /** state.json is a corrupt file already set aside: it must not become `state.json.prev`. */
  let corruptInPlace = false;
  let timer: NodeJS.Timeout | undefined;
  let warnings: string[] = [];
  let recovered: StoreRecovery | undefined;
  let closing: Promise<void> | undefined;

  const tmpName = (tag = '') => `${path}${TMP_MARK}${tag}${randomBytes(6).toString('hex')}`;
  const unwritable = (error: unknown) =>
    new StoreError(`cannot write the state directory ${directory}: ${fsReason(error)} — set ${STATE_DIRECTORY_SETTING} to a writable directory`, directory, { cause: error });

  async function writeDocument(): Promise<void> {
    const text = serializeStateDocument(entries); // the snapshot: synchronous, before any await
    const tmp = tmpName();
    let handle: FileStoreHandle | undefined;
    try {
      handle = await fs.open(tmp, 'wx', 0o600);
      await handle.writeFile(text);
      await handle.datasync();
      await handle.close();
      handle = undefined;
      if (keepPrevious && !corruptInPlace) await linkPrevious();
      await fs.rename(tmp, path);
      corruptInPlace = false;
    } catch (error) {
      await handle?.close().catch(() => undefined);
      await fs.unlink(tmp).catch(() => undefined);
      throw new StoreError(`cannot write ${path}: ${fsReason(error)}; the change is kept in memory and the next write retries`, path, { cause: error });
    }
    try {
      // The rename is durable only once the directory entry is.
      await directoryHandle?.sync();
    } catch (error) {
      if (!NO_DIRECTORY_SYNC.has(errnoCode(error) ?? '')) {
        throw new StoreError(`cannot sync the state directory ${directory}: ${fsReason(error)}`, directory, { cause: error });
      }
      await directoryHandle?.close().catch(() => undefined);
      directoryHandle = undefined;
    }
  }

  /** Keeps the generation about to be replaced, so a later-damaged file can be recovered. */
  async function linkPrevious(): Promise<void> {
    const tmp = tmpName('prev-');
    try {
      await fs.link(path, tmp);
    } catch (error) {
      // No state.json yet is normal; a file system without hard links just keeps no backup.
      if (errnoCode(error) !== 'ENOENT') keepPrevious = false;
      return;
    }
    await fs.rename(tmp, previousPath);
  }

  const committer = createCommitter(writeDocument);

  function scheduleFlush(): void {
    if (timer !== undefined || phase !== 'open') return;
    timer = setTimeout(() => {
      timer = undefined;
      // A failed timed write has no caller to reject: keep the change and try again later.
      committer.commit().catch(() => scheduleFlush());
    }, flushDelayMs);
    timer.unref();
  }

  function requireOpen(action: string): void {
    if (phase === 'open') return;
    const why = phase === 'new' || phase === 'opening' ? 'call open() first' : 'the store is closed';
    throw new StoreError(`cannot ${action} ${path}: ${why}`, path);
  }

  function write(options: WriteOptions | undefined): Promise<void> {
    const seq = committer.change();
    if (options?.durable === true) return committer.commit(seq);
    scheduleFlush();
    return Promise.resolve();
  }

  async function readIfPresent(file: string): Promise<string | undefined> {
    try {
      return await fs.readFile(file, 'utf8');
    } catch (error) {
      if (errnoCode(error) === 'ENOENT') return undefined;
      throw new StoreError(`cannot read ${file}: ${fsReason(error)} — fix its permissions or set ${STATE_DIRECTORY_SETTING} to another directory`, file, { cause: error });
    }
  }

  async function ensureDirectory(): Promise<void> {
    try {
      await fs.mkdir(directory, { recursive: true, mode: 0o700 });
      if ((await fs.stat(directory)).isDirectory()) return;
    } catch (error) {
      const code = errnoCode(error);
      if (code !== 'EEXIST' && code !== 'ENOTDIR') {
        throw new StoreError(`cannot create the state directory ${directory}: ${fsReason(error)} — set ${STATE_DIRECTORY_SETTING} to a writable directory`, directory, { cause: error });
      }
      if (code === 'ENOTDIR') {
        throw new StoreError(`cannot create the state directory ${directory}: ${fsReason(error)} — set ${STATE_DIRECTORY_SETTING} to a directory`, directory, { cause: error });
      }
    }
    throw new StoreError(`the state directory ${directory} is a file, not a directory — set ${STATE_DIRECTORY_SETTING} to a directory, or move that file`, directory);
  }

  async function probeWritable(): Promise<void> {
    const probe = tmpName('probe-');
    try {
      const handle = await fs.open(probe, 'wx', 0o600);
      await handle.writeFile('probe').finally(() => handle.close());
    } catch (error) {
      throw unwritable(error);
    } finally {
      await fs.unlink(probe).catch(() => undefined);
    }
  }

  /** Loads state.json; a corrupt one is set aside and the previous generation (or nothing) used. */
  async function load(): Promise<Map<string, string>> {
    const text = await readIfPresent(path);
    if (text === undefined) return new Map();
    const parsed = parseStateDocument(text);
    if (parsed.ok) return parsed.entries;
    if (parsed.newerVersion !== undefined) {
      throw new StoreError(`${path} was written by a newer listing-agent (${parsed.reason}); upgrade listing-agent or set ${STATE_DIRECTORY_SETTING} to another directory`, path);
    }
    const movedTo = `${path}.corrupt-${new Date(now()).toISOString().replace(/:/g, '-')}`;
    try {
      // Linked, not renamed, where possible: state.json stays (corrupt) until the recovered state
      // replaces it atomically, so a crash or a full disk now cannot leave no state file at all.
      corruptInPlace = await fs.link(path, movedTo).then(
        () => true,
        async () => {
          await fs.rename(path, movedTo);
          return false;
        },
      );
    } catch (error) {
      throw new StoreError(`${path} is corrupt (${parsed.reason}) and cannot be moved aside: ${fsReason(error)}`, path, { cause: error });
    }
    const previousText = await readIfPresent(previousPath).catch(() => undefined);
    const previous = previousText === undefined ? undefined : parseStateDocument(previousText);
    const restored = previous?.ok === true ? previous.entries : undefined;
    recovered = { reason: parsed.reason, movedTo, restoredFrom: restored ? 'previous' : 'empty' };
    warnings.push(
      restored
        ? `${path} was corrupt (${parsed.reason}): moved it to ${movedTo} and restored the previous generation ${previousPath}; the last writes before the damage may be missing`
        : `${path} was corrupt (${parsed.reason}): moved it to ${movedTo} and started with an empty state`,
    );
    return restored ?? new Map();
  }

  async function removeLeftovers(): Promise<void> {
    // Temporary files of a writer that died mid-write: never renamed, so never part of the state.
    const names = await fs.readdir(directory).catch(() => [] as string[]);
    const prefix = `state.json${TMP_MARK}`;
    await Promise.all(names.filter((name) => name.startsWith(prefix)).map((name) => fs.unlink(join(directory, name)).catch(() => undefined)));
  }

  async function openDirectoryHandle(): Promise<FileStoreHandle | undefined> {
    try {
      return await fs.open(directory, 'r');
    } catch {
      return undefined; // Windows cannot open a directory; renames there are durable enough.
    }
  }

  async function release(): Promise<void> {
    clearTimeout(timer);
    timer = undefined;
    await directoryHandle?.close().catch(() => undefined);
    directoryHandle = undefined;
    await lock?.release();
    lock = undefined;
  }

  const store: FileStore = {
    path,
    get recovered() {
      return recovered;
    },
    warnings: () => [...warnings],

    async open() {
      if (phase === 'open') return;
      if (phase === 'opening' || phase === 'closing') throw new StoreError(`cannot open ${path} while it is ${phase}`, path);
      phase = 'opening';
      warnings = [];
      recovered = undefined;
      corruptInPlace = false;
      try {
        await ensureDirectory();
        await probeWritable();
        lock = await acquireStateLock({
          fs,
          directory,
          now,
          staleMs: options.lockStaleMs ?? DEFAULT_LOCK_STALE_MS,
          ...(options.owner ? { owner: options.owner } : {}),
          ...(options.isProcessAlive ? { isProcessAlive: options.isProcessAlive } : {}),
        });
        warnings.push(...lock.warnings);
        await removeLeftovers();
        entries = await load();
        directoryHandle = await openDirectoryHandle();
        phase = 'open';
        // The recovered state replaces the corrupt file now, before anyone relies on it.
        if (recovered !== undefined) await committer.commit(committer.change());
      } catch (error) {
        phase = 'new';
        await release();
        throw error;
      }
    },

    async get<T>(key: string) {
      const json = entries.get(key);
      return json === undefined ? undefined : (JSON.parse(json) as T);
    },

    async set(key, value, writeOptions) {
      requireOpen('write');
      const json = JSON.stringify(value);
      if (json === undefined) throw new TypeError(`cannot store ${typeof value} under "${key}": values are JSON; use delete() to remove a key`);
      entries.set(key, json);
      return write(writeOptions);
    },

    async delete(key, writeOptions) {
      requireOpen('write');
      if (!entries.delete(key)) return writeOptions?.durable === true ? committer.commit() : undefined;
      return write(writeOptions);
    },

    async keys(prefix) {
      return [...entries.keys()].filter((key) => key.startsWith(prefix));
    },

    async flush() {
      requireOpen('flush');
      await committer.commit();
    },

    close() {
      if (phase !== 'open') return closing ?? Promise.resolve();
      phase = 'closing';
      closing = (async () => {
        clearTimeout(timer);
        timer = undefined;
        try {
          await committer.commit();
        } finally {
          await release();
          phase = 'closed';
          closing = undefined;
        }
      })();
      return closing;
    },

    [Symbol.asyncDispose]: () => store.close(),

    describe() {
      const note = recovered ? ` (recovered: a corrupt state file was moved to ${recovered.movedTo})` : '';
      return `file ${path}${note}`;
    },

    stats() {
      const counters = committer.stats();
      return {
        writes: counters.writes,
        failedWrites: counters.failedWrites,
        lastError: counters.lastError === undefined ? undefined : fsReason(counters.lastError),
        pending: committer.pending,
        keys: entries.size,
      };
    },
  };
  return store;
}
