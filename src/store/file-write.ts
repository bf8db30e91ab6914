import { serializeStateDocument } from './document.js';
import { errnoCode, fsReason, StoreError } from './errors.js';
import { NO_DIRECTORY_SYNC, type FileStoreHandle } from './fs.js';
import { type FileStoreState, tmpName } from './file-state.js';
import type { WriteOptions } from './types.js';

/**
 * How a file store writes: the whole document, atomically (temporary file, fsync, the previous
 * generation kept as a hard link, rename, directory fsync), now for a durable write or within
 * `flushDelayMs` for the others.
 */


/** Writes the whole state to `state.json`, atomically; the committer's write. */
export async function writeDocument(state: FileStoreState): Promise<void> {
  const { fs, path } = state;
  const text = serializeStateDocument(state.entries); // the snapshot: synchronous, before any await
  const tmp = tmpName(state);
  let handle: FileStoreHandle | undefined;
  try {
    handle = await fs.open(tmp, 'wx', 0o600);
    await handle.writeFile(text);
    await handle.datasync();
    await handle.close();
    handle = undefined;
    if (state.keepPrevious && !state.corruptInPlace) await linkPrevious(state);
    await fs.rename(tmp, path);
    state.corruptInPlace = false;
  } catch (error) {
    await handle?.close().catch(() => undefined);
    await fs.unlink(tmp).catch(() => undefined);
    throw new StoreError(`cannot write ${path}: ${fsReason(error)}; the change is kept in memory and the next write retries`, path, {
      cause: error,
    });
  }
  try {
    // The rename is durable only once the directory entry is.
    await state.directoryHandle?.sync();
  } catch (error) {
    if (!NO_DIRECTORY_SYNC.has(errnoCode(error) ?? '')) {
      throw new StoreError(`cannot sync the state directory ${state.directory}: ${fsReason(error)}`, state.directory, { cause: error });
    }
    await state.directoryHandle?.close().catch(() => undefined);
    state.directoryHandle = undefined;
  }
}

/** Keeps the generation about to be replaced, so a later-damaged file can be recovered. */
async function linkPrevious(state: FileStoreState): Promise<void> {
  const tmp = tmpName(state, 'prev-');
  try {
    await state.fs.link(state.path, tmp);
  } catch (error) {
    // No state.json yet is normal; a file system without hard links just keeps no backup.
    if (errnoCode(error) !== 'ENOENT') state.keepPrevious = false;
    return;
  }
  await state.fs.rename(tmp, state.previousPath);
}

/** Arms the flush timer of non-durable writes (once; only while open). */
function scheduleFlush(state: FileStoreState): void {
  if (state.timer !== undefined || state.phase !== 'open') return;
  state.timer = setTimeout(() => {
    state.timer = undefined;
    // A failed timed write has no caller to reject: keep the change and try again later.
    state.committer.commit().catch(() => scheduleFlush(state));
  }, state.flushDelayMs);
  state.timer.unref();
}

/** Records a change made in memory: written now when durable (resolving once on disk), else soon. */
export function writeChange(state: FileStoreState, options: WriteOptions | undefined): Promise<void> {
  const seq = state.committer.change();
  if (options?.durable === true) return state.committer.commit(seq);
  scheduleFlush(state);
  return Promise.resolve();
}
