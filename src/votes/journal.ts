import * as fsp from 'node:fs/promises';
import { errnoCode, fsReason, STATE_DIRECTORY_SETTING, StoreError } from '../store/errors.js';
import { nodeFileStoreFs, type FileStoreFs } from '../store/fs.js';
import { parseRecord, readHeader, type JournalRecord } from './ledger-records.js';

/**
 * The file-system calls of the file vote ledger: the file store's (see `FileStoreFs`; an open
 * handle's `writeFile` appends when the file was opened with `a`) plus `truncate`, which cuts a
 * torn record off the journal. Injectable so tests can count fsyncs and make writes fail.
 */
export interface JournalFs extends FileStoreFs {
  truncate(path: string, length: number): Promise<void>;
}

/** Creates `tmp` (it must not exist: `wx`, mode 0600) with `text`, fdatasynced: a snapshot that a rename then puts in place. */
export async function writeNewFile(fs: FileStoreFs, tmp: string, text: string): Promise<void> {
  const out = await fs.open(tmp, 'wx', 0o600);
  try {
    await out.writeFile(text);
    await out.datasync();
  } finally {
    await out.close();
  }
}

/** A journal's text, or undefined when there is none yet; an error that names the fix otherwise. */
export async function readJournalText(fs: FileStoreFs, path: string): Promise<string | undefined> {
  try {
    return await fs.readFile(path, 'utf8');
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return undefined;
    const fix = `fix its permissions or set ${STATE_DIRECTORY_SETTING} to another directory`;
    throw new StoreError(`cannot read ${path}: ${fsReason(error)} — ${fix}`, path, { cause: error });
  }
}

/** Creates the state directory (0700) of a journal, or says which setting to change. */
export async function makeStateDirectory(fs: FileStoreFs, directory: string): Promise<void> {
  try {
    await fs.mkdir(directory, { recursive: true, mode: 0o700 });
  } catch (error) {
    const fix = `set ${STATE_DIRECTORY_SETTING} to a writable directory`;
    throw new StoreError(`cannot create the state directory ${directory}: ${fsReason(error)} — ${fix}`, directory, { cause: error });
  }
}

/** The error of a journal (`what`: `journal`, `reminders journal`) written by a newer version: the agent and the CLI say the same. */
export function newerJournalError(path: string, what: string, version: number): StoreError {
  const newer = `${path} was written by a newer listing-agent (${what} version ${version})`;
  return new StoreError(`${newer}; upgrade listing-agent or set ${STATE_DIRECTORY_SETTING} to another directory`, path);
}

/** The real file system. */
export const nodeJournalFs: JournalFs = {
  ...nodeFileStoreFs,
  truncate: (path, length) => fsp.truncate(path, length),
};

/** What {@link replayLines} found. */
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

/** How one kind of journal reads its lines. */
export interface JournalFormat<R> {
  readHeader(line: string): { kind: 'ours'; version: number } | { kind: 'newer'; version: number } | { kind: 'none' };
  /** The record of a line; `undefined` when it is not one. */
  parseRecord(line: string): R | undefined;
}

const MAX_LISTED = 10;

/**
 * Applies every record of a journal's text, in order (pure). A line is a record only when it ends
 * with a newline: each append writes whole lines in one write, so text after the last newline is
 * the remainder of an append cut short, never acknowledged, and is left out. A whole line that is
 * not a record (damage inside the file) is skipped and counted; the records around it still count,
 * because losing one record is better than losing every record after it. A header from a newer
 * version stops the replay before anything is applied.
 */
export function replayLines<R>(text: string, format: JournalFormat<R>, apply: (record: R) => void): ReplayResult {
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
      const header = format.readHeader(line);
      if (header.kind === 'newer') return { ...result, header };
      if (header.kind === 'ours') {
        result.header = header;
        continue;
      }
    }
    if (line.trim() === '') continue;
    const record = format.parseRecord(line);
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

/** {@link replayLines} of a vote journal (`votes.journal`, see `JournalRecord`). */
export const replayJournal = (text: string, apply: (record: JournalRecord) => void): ReplayResult =>
  replayLines(text, { readHeader, parseRecord }, apply);
