import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import { createCommitter } from '../store/committer.js';
import { errnoCode, fsReason, StoreError, STATE_DIRECTORY_SETTING } from '../store/errors.js';
import type { FileStoreHandle } from '../store/fs.js';
import { nodeJournalFs, replayJournal, type JournalFs, type ReplayResult } from './journal.js';
import { createLedgerOperations } from './ledger-ops.js';
import { JOURNAL_HEADER, recordLine, type JournalRecord } from './ledger-records.js';
import { createLedgerState, type LedgerState } from './ledger-state.js';
import type { VoteLedger } from './types.js';

/** Options of {@link createFileVoteLedger}. */
export interface FileVoteLedgerOptions {
  /**
   * The agent's state directory (created if missing); the journal is `<directory>/votes.journal`.
   * It must be the directory whose `state.lock` the agent's file store holds: the ledger takes no
   * lock of its own, so two agents on one directory are kept apart by the file store alone.
   */
  directory: string;
  /** How long a finished vote's key is kept past its `expiresAt` (config `votes.keepKeysFor`). Default 3 600 000 (1 h). */
  keepKeysForMs?: number;
  /** Current time in epoch ms (the compaction on open, names of set-aside files). Default `Date.now`. */
  now?: () => number;
  /** The file system. Default: `node:fs/promises` (tests count fsyncs and inject failures). */
  fs?: JournalFs;
  /** `compact()` rewrites the journal only once it is at least this big. Default 1 048 576 (1 MiB). */
  compactMinBytes?: number;
  /** ... and at least this many times the size of a snapshot of what is left. Default 4. */
  compactRatio?: number;
}

/** Sizes and counters of a file vote ledger. */
export interface FileVoteLedgerStats {
  keys: number;
  pending: number;
  deadLetters: number;
  /** The journal's size on disk. */
  bytes: number;
  /** Appends (one write and one fsync each) and rewrites that succeeded. */
  commits: number;
  /** Appends or rewrites that failed (their records stay queued and the next commit retries them). */
  failedCommits: number;
  /** Snapshots written by compaction. */
  rewrites: number;
}

/** The file {@link VoteLedger}, with its path, what `open()` repaired, and its counters. */
export interface FileVoteLedger extends VoteLedger {
  /** `<directory>/votes.journal`. */
  readonly path: string;
  warnings(): readonly string[];
  stats(): FileVoteLedgerStats;
  [Symbol.asyncDispose](): Promise<void>;
}

const JOURNAL = 'votes.journal';
const TMP_MARK = '.tmp-';
const HEADER_LINE = recordLine(JOURNAL_HEADER);
/** Directory fsync is not supported everywhere (Windows, some FUSE file systems); losing it is not fatal. */
const NO_DIRECTORY_SYNC = new Set(['EISDIR', 'EPERM', 'EINVAL', 'ENOTSUP', 'EBADF', 'EACCES']);
/** Journals open in this process: a second ledger on one would interleave appends. */
const openHere = new Set<string>();

/**
 * The vote ledger of the file store: an append-only journal `<directory>/votes.journal` of JSON
 * lines (see `JournalRecord`), beside and apart from `state.json`, whose whole-document rewrites
 * would cost too much per vote.
 *
 * - Every change is applied in memory at once, appended as lines and fsynced; the method resolves
 *   once its lines are on disk. Appends are group commits: callers arriving while a write runs
 *   share the next write and fsync, so 100 concurrent `recordPending` calls cost one or two fsyncs.
 *   A failed append rejects its callers, cuts the partial write off the file, keeps the change in
 *   memory and its lines queued: the next commit writes them.
 * - `open()` replays the journal. A torn last line (the process died mid-append; never
 *   acknowledged) is cut off. A damaged line inside is skipped with a warning, the journal is
 *   set aside as `votes.journal.corrupt-<timestamp>` and rewritten without it: the ledger never
 *   crashes on its journal and never silently starts empty. A journal from a newer version throws.
 * - `compact(now)` (also run by `open()`) forgets finished keys whose vote expired more than
 *   `keepKeysForMs` ago, then, once the journal is over `compactMinBytes` and `compactRatio` times
 *   a snapshot of what is left, writes that snapshot to a temporary file, fsyncs it, renames it
 *   over the journal and fsyncs the directory. Memory and disk stay bounded however many votes pass.
 */
export function createFileVoteLedger(options: FileVoteLedgerOptions): FileVoteLedger {
  const { directory } = options;
  const fs = options.fs ?? nodeJournalFs;
  const now = options.now ?? Date.now;
  const keepKeysForMs = options.keepKeysForMs ?? 3_600_000;
  const compactMinBytes = options.compactMinBytes ?? 1_048_576;
  const compactRatio = options.compactRatio ?? 4;
  const path = join(directory, JOURNAL);

  let phase: 'new' | 'opening' | 'open' | 'closing' | 'closed' = 'new';
  let state: LedgerState = createLedgerState(keepKeysForMs);
  let handle: FileStoreHandle | undefined;
  let directoryHandle: FileStoreHandle | undefined;
  /** Lines applied in memory, not yet handed to a write. */
  let queued: string[] = [];
  let bytes = 0;
  let rewriteWanted = false;
  /** Where a journal with damaged lines goes before the rewrite that drops them. */
  let corruptAside: string | undefined;
  let warnings: string[] = [];
  let rewrites = 0;
  let closing: Promise<void> | undefined;

  const failure = (what: string, error: unknown) =>
    new StoreError(`cannot ${what} ${path}: ${fsReason(error)} — the change is kept in memory and the next write retries; check the disk, or set ${STATE_DIRECTORY_SETTING} to a writable directory`, path, { cause: error });

  async function syncDirectory(): Promise<void> {
    try {
      await directoryHandle?.sync();
    } catch (error) {
      if (!NO_DIRECTORY_SYNC.has(errnoCode(error) ?? '')) throw error;
      await directoryHandle?.close().catch(() => undefined);
      directoryHandle = undefined;
    }
  }

  async function append(): Promise<void> {
    const lines = queued; // the snapshot: taken before any await (the committer's rule)
    queued = [];
    if (lines.length === 0) return;
    const chunk = lines.join('');
    try {
      handle ??= await fs.open(path, 'a', 0o600);
      await handle.writeFile(chunk);
      await handle.datasync();
      bytes += Buffer.byteLength(chunk);
    } catch (error) {
      queued = lines.concat(queued);
      // Whatever part of the chunk reached the file must not sit before the retry's lines.
      await fs.truncate(path, bytes).catch(() => undefined);
      throw failure('append to', error);
    }
  }

  async function rewrite(): Promise<void> {
    rewriteWanted = false;
    const lines = queued; // covered by the snapshot: memory already holds their changes
    queued = [];
    const text = HEADER_LINE + state.snapshot().map(recordLine).join('');
    const tmp = `${path}${TMP_MARK}${randomBytes(6).toString('hex')}`;
    let renamed = false;
    try {
      const out = await fs.open(tmp, 'wx', 0o600);
      try {
        await out.writeFile(text);
        await out.datasync();
      } finally {
        await out.close();
      }
      if (corruptAside !== undefined) {
        // Linked, so the evidence of the damage survives the rewrite that drops it.
        await fs.link(path, corruptAside).catch(() => (corruptAside = undefined));
      }
      await fs.rename(tmp, path);
      renamed = true;
      bytes = Buffer.byteLength(text);
      const old = handle;
      handle = undefined; // it points at the replaced file now
      await old?.close().catch(() => undefined);
      await syncDirectory();
      handle = await fs.open(path, 'a', 0o600);
      rewrites += 1;
    } catch (error) {
      if (renamed) {
        // The rename may not be durable: write the snapshot again (with all that came since) next time.
        rewriteWanted = true;
      } else {
        queued = lines.concat(queued);
        await fs.unlink(tmp).catch(() => undefined);
      }
      throw failure('compact', error);
    }
  }

  const committer = createCommitter(() => (rewriteWanted ? rewrite() : append()));

  function requireOpen(action: string): void {
    if (phase === 'open') return;
    const why = phase === 'new' || phase === 'opening' ? 'call open() first' : 'the ledger is closed';
    throw new StoreError(`cannot ${action} ${path}: ${why}`, path);
  }

  function persist(records: JournalRecord[]): Promise<void> {
    if (records.length === 0) return committer.commit();
    for (const record of records) queued.push(recordLine(record));
    return committer.commit(committer.change());
  }

  async function readJournal(): Promise<string | undefined> {
    try {
      return await fs.readFile(path, 'utf8');
    } catch (error) {
      if (errnoCode(error) === 'ENOENT') return undefined;
      throw new StoreError(`cannot read ${path}: ${fsReason(error)} — fix its permissions or set ${STATE_DIRECTORY_SETTING} to another directory`, path, { cause: error });
    }
  }

  async function prepareDirectory(): Promise<void> {
    try {
      await fs.mkdir(directory, { recursive: true, mode: 0o700 });
    } catch (error) {
      throw new StoreError(`cannot create the state directory ${directory}: ${fsReason(error)} — set ${STATE_DIRECTORY_SETTING} to a writable directory`, directory, { cause: error });
    }
    // Snapshots of a compaction that died before its rename: never part of the journal.
    const names = await fs.readdir(directory).catch(() => [] as string[]);
    const prefix = `${JOURNAL}${TMP_MARK}`;
    await Promise.all(names.filter((name) => name.startsWith(prefix)).map((name) => fs.unlink(join(directory, name)).catch(() => undefined)));
    directoryHandle = await fs.open(directory, 'r').catch(() => undefined); // Windows cannot open a directory
  }

  /** Replays the journal into `state`, repairing what can be repaired; creates it when missing. */
  async function load(): Promise<ReplayResult | undefined> {
    const text = await readJournal();
    const replay = text === undefined ? undefined : replayJournal(text, state.apply);
    if (replay?.header.kind === 'newer') {
      throw new StoreError(`${path} was written by a newer listing-agent (journal version ${replay.header.version}); upgrade listing-agent or set ${STATE_DIRECTORY_SETTING} to another directory`, path);
    }
    if (replay !== undefined && replay.tornBytes > 0) {
      await fs.truncate(path, replay.goodBytes).catch((error: unknown) => {
        throw new StoreError(`cannot cut the torn last record off ${path}: ${fsReason(error)}`, path, { cause: error });
      });
      warnings.push(`${path} ended in a torn record (the process stopped in the middle of a write): dropped its ${replay.tornBytes} bytes; that record had not been acknowledged`);
    }
    bytes = replay?.goodBytes ?? 0;
    if (bytes === 0) {
      try {
        const created = await fs.open(path, 'a', 0o600);
        try {
          await created.writeFile(HEADER_LINE);
          await created.datasync();
        } finally {
          await created.close();
        }
        await syncDirectory();
      } catch (error) {
        throw new StoreError(`cannot write the state directory ${directory}: ${fsReason(error)} — set ${STATE_DIRECTORY_SETTING} to a writable directory`, path, { cause: error });
      }
      bytes = Buffer.byteLength(HEADER_LINE);
    } else if (replay !== undefined && (replay.corruptCount > 0 || replay.header.kind === 'missing')) {
      corruptAside = `${path}.corrupt-${new Date(now()).toISOString().replace(/:/g, '-')}`;
      rewriteWanted = true;
    }
    return replay;
  }

  function damageWarning(replay: ReplayResult, rewritten: boolean, aside: string | undefined): string {
    const lines = replay.corruptLines.join(', ') + (replay.corruptCount > replay.corruptLines.length ? ', ...' : '');
    const what = replay.corruptCount > 0 ? `${replay.corruptCount} unreadable line(s) (line ${lines})` : 'no header line';
    const kept = `kept its ${replay.records} readable records`;
    if (!rewritten) return `${path} has ${what}: ${kept}; rewriting it failed, so this repeats at the next open`;
    return `${path} had ${what}: ${kept} and rewrote it without the damage${aside === undefined ? '' : `; the damaged journal is kept as ${aside}`}`;
  }

  async function release(): Promise<void> {
    await handle?.close().catch(() => undefined);
    handle = undefined;
    await directoryHandle?.close().catch(() => undefined);
    directoryHandle = undefined;
    openHere.delete(resolve(path));
  }

  const ledger: FileVoteLedger = {
    path,
    ...createLedgerOperations(() => state, persist, requireOpen),
    warnings: () => [...warnings],

    async open() {
      if (phase === 'open') return state.pending();
      if (phase === 'opening' || phase === 'closing') throw new StoreError(`cannot open ${path} while it is ${phase}`, path);
      if (openHere.has(resolve(path))) throw new StoreError(`${path} is already open in this process: one ledger per state directory`, path);
      openHere.add(resolve(path));
      phase = 'opening';
      state = createLedgerState(keepKeysForMs);
      warnings = [];
      queued = [];
      rewriteWanted = false;
      corruptAside = undefined;
      try {
        await prepareDirectory();
        const replay = await load();
        phase = 'open';
        const aside = corruptAside;
        const rewritesBefore = rewrites;
        await ledger.compact(now()).catch((error: unknown) => warnings.push(`could not compact ${path} on open: ${fsReason(error)}`));
        if (replay !== undefined && aside !== undefined) warnings.push(damageWarning(replay, rewrites > rewritesBefore, corruptAside));
        corruptAside = undefined;
        return state.pending();
      } catch (error) {
        phase = 'new';
        await release();
        throw error;
      }
    },

    has: (key) => state.has(key),
    deadLetters: async () => state.letters(),

    async compact(time) {
      requireOpen('compact');
      state.forget(time);
      if (!rewriteWanted && (bytes < compactMinBytes || bytes < compactRatio * state.snapshotBytes())) return;
      rewriteWanted = true;
      await committer.commit(committer.change());
    },

    stats() {
      const counters = committer.stats();
      return { ...state.counts(), bytes, commits: counters.writes, failedCommits: counters.failedWrites, rewrites };
    },

    close() {
      if (phase !== 'open') return closing ?? Promise.resolve();
      phase = 'closing';
      closing = (async () => {
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

    [Symbol.asyncDispose]: () => ledger.close(),
    describe: () => `file ${path}`,
  };
  return ledger;
}
