import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nodeFileStoreFs, type FileStoreFs, type FileStoreHandle } from '../../../src/store/fs.js';

const made: string[] = [];

/** A fresh directory under the OS temp dir; removed by {@link removeTempDirs}. */
export async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'listing-agent-store-'));
  made.push(dir);
  return dir;
}

export async function removeTempDirs(): Promise<void> {
  await Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
}

/** A system error as Node.js makes them. */
export function errno(code: string, message: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: ${message}`), { code });
}

/** Controls of {@link shimFs}. */
export interface FsShim {
  fs: FileStoreFs;
  /** When set, writes of state temp files write half their data and then throw this. */
  failWrites: NodeJS.ErrnoException | undefined;
  /** When set, opening a probe or temp file throws this (an unwritable directory). */
  failOpens: NodeJS.ErrnoException | undefined;
  /** When set, `datasync` of a state temp file waits for it (a slow disk). */
  gate: Promise<void> | undefined;
  /** `datasync` calls on state temp files: one per whole-file write. */
  datasyncs: number;
  /** State temp files whose write started. */
  writesStarted: number;
}

/** The real file system with counters and injectable failures on the store's temp files. */
export function shimFs(base: FileStoreFs = nodeFileStoreFs): FsShim {
  const shim: FsShim = {
    failWrites: undefined,
    failOpens: undefined,
    gate: undefined,
    datasyncs: 0,
    writesStarted: 0,
    fs: {
      ...base,
      async open(path, flags, mode) {
        const isTemp = path.includes('state.json.tmp-');
        if (isTemp && shim.failOpens) throw shim.failOpens;
        const handle = await base.open(path, flags, mode);
        if (!isTemp || path.includes('probe')) return handle;
        const wrapped: FileStoreHandle = {
          async writeFile(data) {
            shim.writesStarted += 1;
            if (shim.failWrites) {
              await handle.writeFile(data.slice(0, Math.floor(data.length / 2)));
              throw shim.failWrites;
            }
            await handle.writeFile(data);
          },
          async datasync() {
            shim.datasyncs += 1;
            if (shim.gate) await shim.gate;
            await handle.datasync();
          },
          sync: () => handle.sync(),
          close: () => handle.close(),
        };
        return wrapped;
      },
    },
  };
  return shim;
}
