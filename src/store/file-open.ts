import { join } from 'node:path';
import { parseStateDocument } from './document.js';
import { errnoCode, fsReason, StoreError, STATE_DIRECTORY_SETTING } from './errors.js';
import type { FileStoreHandle } from './fs.js';
import { DEFAULT_LOCK_STALE_MS, type FileStoreState, TMP_MARK, tmpName } from './file-state.js';
import { acquireStateLock } from './lock.js';

/**
 * How a file store opens and closes: the directory made and probed, the lock taken, a dead
 * writer's leftovers removed, the state loaded (a corrupt file set aside and the previous
 * generation restored), and everything released again.
 */

/** The state directory's setting as the messages name it: the `setting` option, else the daemon's words. */
function setting(state: FileStoreState): string {
  return state.options.setting ?? STATE_DIRECTORY_SETTING;
}

async function readIfPresent(state: FileStoreState, file: string): Promise<string | undefined> {
  try {
    return await state.fs.readFile(file, 'utf8');
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return undefined;
    throw new StoreError(
      `cannot read ${file}: ${fsReason(error)} — fix its permissions or set ${setting(state)} to another directory`,
      file,
      { cause: error },
    );
  }
}

async function ensureDirectory(state: FileStoreState): Promise<void> {
  const { fs, directory } = state;
  try {
    await fs.mkdir(directory, { recursive: true, mode: 0o700 });
    if ((await fs.stat(directory)).isDirectory()) return;
  } catch (error) {
    const code = errnoCode(error);
    if (code !== 'EEXIST' && code !== 'ENOTDIR') {
      throw new StoreError(
        `cannot create the state directory ${directory}: ${fsReason(error)} — set ${setting(state)} to a writable directory`,
        directory,
        { cause: error },
      );
    }
    if (code === 'ENOTDIR') {
      throw new StoreError(
        `cannot create the state directory ${directory}: ${fsReason(error)} — set ${setting(state)} to a directory`,
        directory,
        { cause: error },
      );
    }
  }
  throw new StoreError(
    `the state directory ${directory} is a file, not a directory — set ${setting(state)} to a directory, or move that file`,
    directory,
  );
}

async function probeWritable(state: FileStoreState): Promise<void> {
  const { fs, directory } = state;
  const probe = tmpName(state, 'probe-');
  try {
    const handle = await fs.open(probe, 'wx', 0o600);
    await handle.writeFile('probe').finally(() => handle.close());
  } catch (error) {
    throw new StoreError(
      `cannot write the state directory ${directory}: ${fsReason(error)} — set ${setting(state)} to a writable directory`,
      directory,
      { cause: error },
    );
  } finally {
    await fs.unlink(probe).catch(() => undefined);
  }
}

/** Loads state.json; a corrupt one is set aside and the previous generation (or nothing) used. */
async function loadEntries(state: FileStoreState): Promise<Map<string, string>> {
  const { fs, path, previousPath } = state;
  const text = await readIfPresent(state, path);
  if (text === undefined) return new Map();
  const parsed = parseStateDocument(text);
  if (parsed.ok) return parsed.entries;
  if (parsed.newerVersion !== undefined) {
    throw new StoreError(
      `${path} was written by a newer listing-agent ` +
        `(${parsed.reason}); upgrade listing-agent or set ${setting(state)} to another directory`,
      path,
    );
  }
  const movedTo = `${path}.corrupt-${new Date(state.now()).toISOString().replace(/:/g, '-')}`;
  try {
    // Linked, not renamed, where possible: state.json stays (corrupt) until the recovered state
    // replaces it atomically, so a crash or a full disk now cannot leave no state file at all.
    state.corruptInPlace = await fs.link(path, movedTo).then(
      () => true,
      async () => {
        await fs.rename(path, movedTo);
        return false;
      },
    );
  } catch (error) {
    throw new StoreError(`${path} is corrupt (${parsed.reason}) and cannot be moved aside: ${fsReason(error)}`, path, { cause: error });
  }
  const previousText = await readIfPresent(state, previousPath).catch(() => undefined);
  const previous = previousText === undefined ? undefined : parseStateDocument(previousText);
  const restored = previous?.ok === true ? previous.entries : undefined;
  state.recovered = { reason: parsed.reason, movedTo, restoredFrom: restored ? 'previous' : 'empty' };
  state.warnings.push(
    restored
      ? `${path} was corrupt ` +
        `(${parsed.reason}): moved it ` +
        `to ${movedTo} and restored the previous generation ${previousPath}; the last writes before the damage may be missing`
      : `${path} was corrupt (${parsed.reason}): moved it to ${movedTo} and started with an empty state`,
  );
  return restored ?? new Map();
}

async function removeLeftovers({ fs, directory }: FileStoreState): Promise<void> {
  // Temporary files of a writer that died mid-write: never renamed, so never part of the state.
  const names = await fs.readdir(directory).catch(() => [] as string[]);
  const prefix = `state.json${TMP_MARK}`;
  await Promise.all(names.filter((name) => name.startsWith(prefix)).map((name) => fs.unlink(join(directory, name)).catch(() => undefined)));
}

async function openDirectoryHandle({ fs, directory }: FileStoreState): Promise<FileStoreHandle | undefined> {
  try {
    return await fs.open(directory, 'r');
  } catch {
    return undefined; // Windows cannot open a directory; renames there are durable enough.
  }
}

/** Stops the flush timer, closes the directory handle, releases the lock. */
async function release(state: FileStoreState): Promise<void> {
  clearTimeout(state.timer);
  state.timer = undefined;
  state.removeProbe?.();
  state.removeProbe = undefined;
  state.health.close();
  await state.directoryHandle?.close().catch(() => undefined);
  state.directoryHandle = undefined;
  await state.lock?.release();
  state.lock = undefined;
}

/** `open()`: see `createFileStore`. On failure everything taken is released and the store is new again. */
export async function openFileStore(state: FileStoreState): Promise<void> {
  const { options } = state;
  if (state.phase === 'open') return;
  if (state.phase === 'opening' || state.phase === 'closing')
    throw new StoreError(`cannot open ${state.path} while it is ${state.phase}`, state.path);
  state.phase = 'opening';
  state.warnings = [];
  state.recovered = undefined;
  state.corruptInPlace = false;
  try {
    await ensureDirectory(state);
    await probeWritable(state);
    state.lock = await acquireStateLock({
      fs: state.fs,
      directory: state.directory,
      now: state.now,
      setting: setting(state),
      staleMs: options.lockStaleMs ?? DEFAULT_LOCK_STALE_MS,
      ...(options.owner ? { owner: options.owner } : {}),
      ...(options.isProcessAlive ? { isProcessAlive: options.isProcessAlive } : {}),
      ...(options.botProcess ? { botProcess: options.botProcess } : {}),
    });
    state.warnings.push(...state.lock.warnings);
    await removeLeftovers(state);
    state.entries = await loadEntries(state);
    state.directoryHandle = await openDirectoryHandle(state);
    state.phase = 'open';
    // While the directory cannot be written, the probe also writes what the store keeps in memory.
    state.removeProbe = state.health.addProbe(() => (state.committer.pending ? state.committer.commit() : Promise.resolve()));
    // The recovered state replaces the corrupt file now, before anyone relies on it.
    if (state.recovered !== undefined) await state.committer.commit(state.committer.change());
  } catch (error) {
    state.phase = 'new';
    await release(state);
    throw error;
  }
}

/** `close()`: writes what is pending, then releases; a second call joins the first. */
export function closeFileStore(state: FileStoreState): Promise<void> {
  if (state.phase !== 'open') return state.closing ?? Promise.resolve();
  state.phase = 'closing';
  state.closing = (async () => {
    clearTimeout(state.timer);
    state.timer = undefined;
    try {
      await state.committer.commit();
    } finally {
      await release(state);
      state.phase = 'closed';
      state.closing = undefined;
    }
  })();
  return state.closing;
}
