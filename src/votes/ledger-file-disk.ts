import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import type { Committer } from '../store/committer.js';
import { errnoCode, fsReason, StoreError, STATE_DIRECTORY_SETTING } from '../store/errors.js';
import { NO_DIRECTORY_SYNC, type FileStoreHandle } from '../store/fs.js';
import type { WriteHealth } from '../store/write-health.js';
import { giveUpReserve, isNoSpace, type Reserve } from './ledger-file-space.js';
import {
  makeStateDirectory,
  newerJournalError,
  readJournalText,
  replayJournal,
  writeNewFile,
  type JournalFs,
  type ReplayResult,
} from './journal.js';
import { JOURNAL_HEADER, recordLine } from './ledger-records.js';
import type { LedgerState } from './ledger-state.js';

/**
 * The disk side of the file vote ledger (`ledger-file.ts`): its state, appends and rewrites of
 * the journal, and what `open()` reads and repairs.
 */

export const JOURNAL = 'votes.journal';
/**
 * A version 2 journal that held vote reminders, as the version before this one left it: linked
 * there before the rewrite under this version's header, so that the reminders can carry their
 * schedule over whichever part of the agent opens the ledger first (`reminders/carry-over.ts`).
 */
export const VERSION_2_ASIDE = `${JOURNAL}.v2`;
const TMP_MARK = '.tmp-';
const HEADER_LINE = recordLine(JOURNAL_HEADER);
/** Journals open in this process: a second ledger on one would interleave appends. */
export const openHere = new Set<string>();

/** The state of one file ledger. */
export interface FileLedgerState {
  readonly directory: string;
  /** `<directory>/votes.journal`. */
  readonly path: string;
  readonly fs: JournalFs;
  readonly now: () => number;
  readonly keepKeysForMs: number;
  readonly compactMinBytes: number;
  readonly compactRatio: number;
  phase: 'new' | 'opening' | 'open' | 'closing' | 'closed';
  state: LedgerState;
  /** The journal opened for appending, kept while group commits follow each other (see `appendChunk`). */
  handle: FileStoreHandle | undefined;
  directoryHandle: FileStoreHandle | undefined;
  /** Lines applied in memory, not yet handed to a write. */
  queued: string[];
  bytes: number;
  rewriteWanted: boolean;
  /**
   * The journal on disk has another version's header (version 2): until a rewrite under this
   * version's header succeeds every commit is a rewrite, so that no line of this version follows
   * that header and 0.1.0 can read the journal once it is rewritten.
   */
  headerOutdated: boolean;
  /** Where a journal with damaged lines goes before the rewrite that drops them. */
  corruptAside: string | undefined;
  /** Where a version 2 journal goes before the rewrite under this version's header ({@link VERSION_2_ASIDE}). */
  versionAside: string | undefined;
  warnings: string[];
  rewrites: number;
  closing: Promise<void> | undefined;
  /** Group commits: an append, or the rewrite when one is wanted. */
  readonly committer: Committer;
  /** Whether the state directory takes writes (shared with the file store on the same directory). */
  readonly health: WriteHealth;
  /** The health is this ledger's own (no file store on its directory shares one): it closes it. */
  readonly ownsHealth: boolean;
  /** Room kept for the records that finish votes (see `ledger-file-space.ts`). */
  readonly reserve: Reserve;
  /** The next commit takes the reserve back after its append (the probe of a full disk). */
  restoreWanted: boolean;
  /** The outcome of the last attempt to take the reserve back: undefined when it worked. */
  restoreError: unknown;
  /** Removes the ledger's probe from the health (while open). */
  removeProbe: (() => void) | undefined;
}

const failureError = (f: FileLedgerState, what: string, error: unknown) =>
  new StoreError(
    `cannot ${what} ${f.path}: ${fsReason(error)} — the change is kept in memory and the next write retries; ` +
      `check the disk, or set ${STATE_DIRECTORY_SETTING} to a writable directory`,
    f.path,
    { cause: error },
  );

async function syncDirectory(f: FileLedgerState): Promise<void> {
  try {
    await f.directoryHandle?.sync();
  } catch (error) {
    if (!NO_DIRECTORY_SYNC.has(errnoCode(error) ?? '')) throw error;
    await f.directoryHandle?.close().catch(() => undefined);
    f.directoryHandle = undefined;
  }
}

/**
 * One append: the chunk written and synced through the journal's handle, opened if none is kept.
 * The handle is kept only when the next write is due already (lines were queued meanwhile), so
 * back-to-back group commits under a burst share one; with nothing left to write it is closed, so
 * no file is held open for writing between writes and the directory can be remounted read-only
 * under traffic. The open and the close are two more trips to libuv's thread pool per commit:
 * under a burst they were a visible share of the receiver's CPU per delivery (BENCHMARKS.md).
 */
async function appendChunk(f: FileLedgerState, chunk: string): Promise<void> {
  try {
    f.handle ??= await f.fs.open(f.path, 'a', 0o600);
    await f.handle.writeFile(chunk);
    await f.handle.datasync();
  } catch (error) {
    await closeJournal(f);
    throw error;
  }
  f.bytes += Buffer.byteLength(chunk);
  if (f.queued.length === 0) await closeJournal(f);
}

/** Closes the journal's kept handle, if any (what it wrote is synced already, or failed). */
async function closeJournal(f: FileLedgerState): Promise<void> {
  const handle = f.handle;
  f.handle = undefined;
  await handle?.close().catch(() => undefined);
}

export async function append(f: FileLedgerState): Promise<void> {
  const lines = f.queued; // the snapshot: taken before any await (the committer's rule)
  f.queued = [];
  if (lines.length === 0) return;
  const chunk = lines.join('');
  let failure: unknown;
  try {
    await appendChunk(f, chunk);
    return;
  } catch (error) {
    failure = error;
    // Whatever part of the chunk reached the file must not sit before the retry's lines.
    await f.fs.truncate(f.path, f.bytes).catch(() => undefined);
  }
  // A full disk: the reserve's room takes this chunk (the records of votes already acknowledged).
  if (isNoSpace(failure) && (await giveUpReserve(f.fs, f.reserve))) {
    f.health.failed(failure);
    try {
      await appendChunk(f, chunk);
      return;
    } catch (again) {
      failure = again;
      await f.fs.truncate(f.path, f.bytes).catch(() => undefined);
    }
  }
  f.queued = lines.concat(f.queued);
  throw failureError(f, 'append to', failure);
}

export async function rewrite(f: FileLedgerState): Promise<void> {
  const { fs, path } = f;
  f.rewriteWanted = false;
  const lines = f.queued; // covered by the snapshot: memory already holds their changes
  f.queued = [];
  const text = HEADER_LINE + f.state.snapshot().map(recordLine).join('');
  const tmp = `${path}${TMP_MARK}${randomBytes(6).toString('hex')}`;
  let renamed = false;
  try {
    await closeJournal(f); // the rename replaces the file it points at
    await writeNewFile(fs, tmp, text);
    if (f.corruptAside !== undefined) {
      // Linked, so the evidence of the damage survives the rewrite that drops it.
      await fs.link(path, f.corruptAside).catch(() => (f.corruptAside = undefined));
    }
    if (f.versionAside !== undefined) {
      // The newest version 2 journal: one an earlier upgrade left there goes.
      await fs.unlink(f.versionAside).catch(() => undefined);
      await fs.link(path, f.versionAside).catch(() => undefined);
    }
    await fs.rename(tmp, path);
    renamed = true;
    f.bytes = Buffer.byteLength(text);
    await syncDirectory(f);
    f.rewrites += 1;
    f.headerOutdated = false;
    f.versionAside = undefined;
  } catch (error) {
    if (renamed) {
      // The rename may not be durable: write the snapshot again (with all that came since) next time.
      f.rewriteWanted = true;
    } else {
      f.queued = lines.concat(f.queued);
      // An outdated header must not get this version's lines: the next commit tries the rewrite again.
      if (f.headerOutdated) f.rewriteWanted = true;
      await fs.unlink(tmp).catch(() => undefined);
    }
    throw failureError(f, 'compact', error);
  }
}

export async function prepareDirectory(f: FileLedgerState): Promise<void> {
  const { fs, directory } = f;
  await makeStateDirectory(fs, directory);
  // Snapshots of a compaction that died before its rename: never part of the journal.
  const names = await fs.readdir(directory).catch(() => [] as string[]);
  const prefix = `${JOURNAL}${TMP_MARK}`;
  await Promise.all(names.filter((name) => name.startsWith(prefix)).map((name) => fs.unlink(join(directory, name)).catch(() => undefined)));
  f.directoryHandle = await fs.open(directory, 'r').catch(() => undefined); // Windows cannot open a directory
}

/** Writes a new journal: its header line alone. */
async function createJournal(f: FileLedgerState): Promise<void> {
  try {
    const created = await f.fs.open(f.path, 'a', 0o600);
    try {
      await created.writeFile(HEADER_LINE);
      await created.datasync();
    } finally {
      await created.close();
    }
    await syncDirectory(f);
  } catch (error) {
    const fix = `set ${STATE_DIRECTORY_SETTING} to a writable directory`;
    throw new StoreError(`cannot write the state directory ${f.directory}: ${fsReason(error)} — ${fix}`, f.path, { cause: error });
  }
  f.bytes = Buffer.byteLength(HEADER_LINE);
}

/** Replays the journal into `state`, repairing what can be repaired; creates it when missing. */
export async function load(f: FileLedgerState): Promise<ReplayResult | undefined> {
  const { path } = f;
  const text = await readJournalText(f.fs, f.path);
  let remindersHeld = false;
  const replay =
    text === undefined
      ? undefined
      : replayJournal(text, (record) => {
          if (record.t === 'r') remindersHeld = true;
          f.state.apply(record);
        });
  if (replay?.header.kind === 'newer') throw newerJournalError(path, 'journal', replay.header.version);
  if (replay !== undefined && replay.tornBytes > 0) {
    await f.fs.truncate(path, replay.goodBytes).catch((error: unknown) => {
      throw new StoreError(`cannot cut the torn last record off ${path}: ${fsReason(error)}`, path, { cause: error });
    });
    f.warnings.push(
      `${path} ended in a torn record (the process stopped in the middle of a write): ` +
        `dropped its ${replay.tornBytes} bytes; that record had not been acknowledged`,
    );
  }
  f.bytes = replay?.goodBytes ?? 0;
  if (f.bytes === 0) {
    await createJournal(f);
  } else if (replay !== undefined && (replay.corruptCount > 0 || replay.header.kind === 'missing')) {
    f.corruptAside = `${path}.corrupt-${new Date(f.now()).toISOString().replace(/:/g, '-')}`;
    f.rewriteWanted = true;
  } else if (replay?.header.kind === 'ours' && replay.header.version !== JOURNAL_HEADER.version) {
    // Rewritten under this version's header before any line of this version is appended to it.
    f.rewriteWanted = true;
    f.headerOutdated = true;
    if (remindersHeld) f.versionAside = join(f.directory, VERSION_2_ASIDE);
  }
  return replay;
}

export function damageWarning(f: FileLedgerState, replay: ReplayResult, rewritten: boolean, aside: string | undefined): string {
  const lines = replay.corruptLines.join(', ') + (replay.corruptCount > replay.corruptLines.length ? ', ...' : '');
  const what = replay.corruptCount > 0 ? `${replay.corruptCount} unreadable line(s) (line ${lines})` : 'no header line';
  const kept = `kept its ${replay.records} readable records`;
  if (!rewritten) return `${f.path} has ${what}: ${kept}; rewriting it failed, so this repeats at the next open`;
  const keptAside = aside === undefined ? '' : `; the damaged journal is kept as ${aside}`;
  return `${f.path} had ${what}: ${kept} and rewrote it without the damage${keptAside}`;
}

export async function release(f: FileLedgerState): Promise<void> {
  await closeJournal(f);
  await f.directoryHandle?.close().catch(() => undefined);
  f.directoryHandle = undefined;
  openHere.delete(resolve(f.path));
}
