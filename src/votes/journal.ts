import { writeSync } from 'node:fs';
import * as fsp from 'node:fs/promises';
import { nodeFileStoreFs, type FileStoreFs, type FileStoreHandle } from '../store/fs.js';
import { parseRecord, readHeader, type JournalRecord } from './ledger-records.js';

/**
 * The file-system calls of the file vote ledger: the file store's (see `FileStoreFs`; an open
 * handle's `writeFile` appends when the file was opened with `a`) plus `truncate`, which cuts a
 * torn record off the journal. Injectable so tests can count fsyncs and make writes fail.
 */
export interface JournalFs extends FileStoreFs {
  open(path: string, flags: string, mode?: number): Promise<JournalHandle>;
  truncate(path: string, length: number): Promise<void>;
}

/** An open journal file. */
export interface JournalHandle extends FileStoreHandle {
  /**
   * Writes all of `data` (UTF-8) at the handle's position, synchronously, and returns the bytes
   * written; throws as `writeFile` rejects (ENOSPC, EROFS, EIO), possibly after writing part of it.
   * The ledger writes a group commit's chunk, a few KiB, with it: into the page cache, that takes
   * microseconds on the event loop, where a thread-pool round trip costs more than the write,
   * and only the `datasync` then waits on the pool. Optional: a handle without it (an injected
   * `fs`) is written with `writeFile`.
   */
  writeSync?(data: string): number;
}

/** Writes all of `data` to `fd` at its position (a short write goes on with the rest); the bytes written. */
function writeAllSync(fd: number, data: string): number {
  const written = writeSync(fd, data);
  const bytes = Buffer.byteLength(data);
  if (written === bytes) return bytes;
  // Short writes are rare on a regular file (a signal, the disk filling up): the rest as bytes.
  const buffer = Buffer.from(data);
  for (let done = written; done < bytes; ) done += writeSync(fd, buffer, done, bytes - done);
  return bytes;
}

/** A handle of `node:fs/promises` with {@link JournalHandle.writeSync} on its descriptor. */
function journalHandle(handle: fsp.FileHandle): JournalHandle {
  return {
    writeFile: (data) => handle.writeFile(data),
    writeSync: (data) => writeAllSync(handle.fd, data),
    datasync: () => handle.datasync(),
    sync: () => handle.sync(),
    close: () => handle.close(),
  };
}

/** The real file system. */
export const nodeJournalFs: JournalFs = {
  ...nodeFileStoreFs,
  open: async (path, flags, mode) => journalHandle(await fsp.open(path, flags, mode)),
  truncate: (path, length) => fsp.truncate(path, length),
};

/** What {@link replayJournal} found. */
export interface ReplayResult {
  /** Bytes of the journal up to and including its last newline: the part made of whole lines. */
  goodBytes: number;
  /** Bytes after the last newline: a record cut short by a crash mid-write (never acknowledged). */
  tornBytes: number;
  /** Records applied. */
  records: number;
  /** Whole lines that are not records (1-based line numbers, at most the first 10). */
  corruptLines: number[];
  /** How many whole lines are not records. */
  corruptCount: number;
  /** `missing`: the first line is not the header (the journal was damaged at its start). `ours` may be an older version. */
  header: { kind: 'ours'; version: number } | { kind: 'newer'; version: number } | { kind: 'missing' };
}

const MAX_LISTED = 10;

/**
 * Applies every record of a journal's text, in order (pure). A line is a record only when it ends
 * with a newline: each append writes whole lines in one write, so text after the last newline is
 * the remainder of an append cut short, never acknowledged, and is left out. A whole line that is
 * not a record (damage inside the file) is skipped and counted; the records around it still count,
 * because losing one record is better than losing every vote after it. A header from a newer
 * version stops the replay before anything is applied.
 */
export function replayJournal(text: string, apply: (record: JournalRecord) => void): ReplayResult {
  const lastNewline = text.lastIndexOf('\n');
  const whole = text.slice(0, lastNewline + 1);
  const goodBytes = Buffer.byteLength(whole);
  const result: ReplayResult = {
    goodBytes,
    tornBytes: Buffer.byteLength(text) - goodBytes,
    records: 0,
    corruptLines: [],
    corruptCount: 0,
    header: { kind: 'missing' },
  };
  let start = 0;
  let lineNumber = 0;
  while (start < whole.length) {
    const end = whole.indexOf('\n', start);
    const line = whole.slice(start, end);
    start = end + 1;
    lineNumber += 1;
    if (lineNumber === 1) {
      const header = readHeader(line);
      if (header.kind === 'newer') return { ...result, header };
      if (header.kind === 'ours') {
        result.header = header;
        continue;
      }
    }
    if (line.trim() === '') continue;
    const record = parseRecord(line);
    if (record === undefined) {
      result.corruptCount += 1;
      if (result.corruptLines.length < MAX_LISTED) result.corruptLines.push(lineNumber);
      continue;
    }
    apply(record);
    result.records += 1;
  }
  return result;
}
