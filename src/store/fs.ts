import * as fsp from 'node:fs/promises';

/** The part of an open file the store uses. */
export interface FileStoreHandle {
  writeFile(data: string): Promise<void>;
  /** Flushes the file's data (and the size needed to read it back) to the disk. */
  datasync(): Promise<void>;
  /** Flushes data and metadata; used on the directory after a rename. */
  sync(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The file-system calls the file store makes. Injectable so that tests can count writes and make
 * them fail (a full disk, EACCES) without a real broken disk. Default: `node:fs/promises`.
 */
export interface FileStoreFs {
  mkdir(path: string, options: { recursive: true; mode: number }): Promise<unknown>;
  stat(path: string): Promise<{ ino: number; mtimeMs: number; isDirectory(): boolean }>;
  open(path: string, flags: string, mode?: number): Promise<FileStoreHandle>;
  readFile(path: string, encoding: 'utf8'): Promise<string>;
  rename(from: string, to: string): Promise<void>;
  unlink(path: string): Promise<void>;
  link(existing: string, newPath: string): Promise<void>;
  readdir(path: string): Promise<string[]>;
  utimes(path: string, atime: Date, mtime: Date): Promise<void>;
}

/** Directory fsync is not supported everywhere (Windows, some FUSE file systems): losing it is not fatal. */
export const NO_DIRECTORY_SYNC: ReadonlySet<string> = new Set(['EISDIR', 'EPERM', 'EINVAL', 'ENOTSUP', 'EBADF', 'EACCES']);

/** The real file system. */
export const nodeFileStoreFs: FileStoreFs = {
  mkdir: (path, options) => fsp.mkdir(path, options),
  stat: (path) => fsp.stat(path),
  open: (path, flags, mode) => fsp.open(path, flags, mode),
  readFile: (path, encoding) => fsp.readFile(path, encoding),
  rename: (from, to) => fsp.rename(from, to),
  unlink: (path) => fsp.unlink(path),
  link: (existing, newPath) => fsp.link(existing, newPath),
  readdir: (path) => fsp.readdir(path),
  utimes: (path, atime, mtime) => fsp.utimes(path, atime, mtime),
};
