import type { StateStore } from './types.js';

/** Options of {@link createFileStore}. */
export interface FileStoreOptions {
  /** The directory (created if missing); the state is `<directory>/state.json`. */
  directory: string;
  /** How long a non-durable write may wait before it reaches disk. Default 1000 ms. */
  flushDelayMs?: number;
}

/** The default state store: one JSON file, written atomically (temp file, fsync, rename). */
export function createFileStore(options: FileStoreOptions): StateStore {
  void options;
  throw new Error('createFileStore: being written');
}
