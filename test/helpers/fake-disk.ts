import type { FileStoreHandle } from '../../src/store/fs.js';
import { nodeJournalFs, type JournalFs } from '../../src/votes/journal.js';

/**
 * A small disk in front of the real file system, for the file store and the file vote ledger
 * (their injectable `fs`): it counts the bytes of the files written through it against a
 * capacity, so a write past it writes what fits and fails with ENOSPC, as a full disk does; a
 * truncate or an unlink gives the room back. `readOnly` makes every write fail with EROFS, as a
 * file system remounted read-only does. The files are real (a restart on the real fs reads them).
 */
export interface FakeDisk {
  fs: JournalFs;
  /** Bytes of the files written through it. */
  used(): number;
  /** No room left: the capacity becomes what is used now (a filler file took the rest). */
  fill(): void;
  /** `bytes` of room again (the filler file removed); default plenty. */
  free(bytes?: number): void;
  readOnly: boolean;
  /** ENOSPC and EROFS failures so far. */
  failures: { ENOSPC: number; EROFS: number };
}

const systemError = (code: 'ENOSPC' | 'EROFS', syscall: string, path: string) =>
  Object.assign(new Error(`${code}: ${code === 'ENOSPC' ? 'no space left on device' : 'read-only file system'}, ${syscall} '${path}'`), { code, syscall, path });

const WRITING = /[wa+]/;

/** Creates a fake disk of `capacityBytes` (default plenty) over the real file system. */
export function fakeDisk(capacityBytes = Number.MAX_SAFE_INTEGER): FakeDisk {
  const sizes = new Map<string, number>();
  let capacity = capacityBytes;
  const used = () => [...sizes.values()].reduce((sum, size) => sum + size, 0);

  function refuse(syscall: string, path: string): void {
    if (!disk.readOnly) return;
    disk.failures.EROFS += 1;
    throw systemError('EROFS', syscall, path);
  }

  /** Takes room for `data` growing `path` from `offset`; writes what fits through `write`, then throws ENOSPC. */
  async function grow(path: string, offset: number, data: string, write: (part: string) => Promise<void>): Promise<void> {
    refuse('write', path);
    const size = sizes.get(path) ?? 0;
    const growth = Math.max(0, offset + Buffer.byteLength(data) - size);
    const room = capacity - used();
    if (growth <= room) {
      await write(data);
      sizes.set(path, Math.max(size, offset + Buffer.byteLength(data)));
      return;
    }
    const fits = Math.max(0, size - offset + room);
    const part = Buffer.from(data).subarray(0, fits).toString();
    await write(part);
    sizes.set(path, Math.max(size, offset + Buffer.byteLength(part)));
    disk.failures.ENOSPC += 1;
    throw systemError('ENOSPC', 'write', path);
  }

  const fs: JournalFs = {
    ...nodeJournalFs,
    async mkdir(path, options) {
      refuse('mkdir', path);
      return nodeJournalFs.mkdir(path, options);
    },
    async open(path, flags, mode) {
      if (!WRITING.test(flags)) return nodeJournalFs.open(path, flags, mode);
      refuse('open', path);
      const handle = await nodeJournalFs.open(path, flags, mode);
      if (flags.startsWith('w')) sizes.set(path, 0);
      // Where this handle's next write lands: the end for 'a', else where the last one stopped.
      let position = flags.startsWith('a') ? (sizes.get(path) ?? 0) : 0;
      const wrapped: FileStoreHandle = {
        async writeFile(data) {
          if (flags.startsWith('a')) position = sizes.get(path) ?? position;
          await grow(path, position, data, (part) => handle.writeFile(part));
          position += Buffer.byteLength(data);
        },
        async datasync() {
          refuse('fdatasync', path);
          await handle.datasync();
        },
        sync: () => handle.sync(),
        close: () => handle.close(),
      };
      return wrapped;
    },
    async rename(from, to) {
      refuse('rename', to);
      await nodeJournalFs.rename(from, to);
      const size = sizes.get(from);
      sizes.delete(from);
      if (size === undefined) sizes.delete(to);
      else sizes.set(to, size);
    },
    async unlink(path) {
      refuse('unlink', path);
      await nodeJournalFs.unlink(path);
      sizes.delete(path);
    },
    async link(existing, newPath) {
      refuse('link', newPath);
      return nodeJournalFs.link(existing, newPath);
    },
    async truncate(path, length) {
      refuse('truncate', path);
      await nodeJournalFs.truncate(path, length);
      sizes.set(path, length);
    },
    async utimes(path, atime, mtime) {
      refuse('utime', path);
      return nodeJournalFs.utimes(path, atime, mtime);
    },
  };

  const disk: FakeDisk = {
    fs,
    used,
    fill: () => (capacity = used()),
    free: (bytes = Number.MAX_SAFE_INTEGER) => (capacity = Math.min(Number.MAX_SAFE_INTEGER, used() + bytes)),
    readOnly: false,
    failures: { ENOSPC: 0, EROFS: 0 },
  };
  return disk;
}
