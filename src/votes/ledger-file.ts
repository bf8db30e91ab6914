import { join, resolve } from 'node:path';
import { createCommitter } from '../store/committer.js';
import { fsReason, StoreError } from '../store/errors.js';
import { createWriteHealth, describeWriteProblem, type WriteHealth } from '../store/write-health.js';
import { nodeJournalFs, type JournalFs } from './journal.js';
import { append, damageWarning, JOURNAL, load, openHere, prepareDirectory, release, rewrite } from './ledger-file-disk.js';
import type { FileLedgerState } from './ledger-file-disk.js';
import { DEFAULT_RESERVE_BYTES, LedgerCloseError, RESERVE_SUFFIX } from './ledger-file-space.js';
import { takeReserve, touchReserve, unwrittenRecords } from './ledger-file-space.js';
import { createLedgerOperations } from './ledger-ops.js';
import { recordLine, type JournalRecord } from './ledger-records.js';
import { createLedgerState } from './ledger-state.js';
import type { LedgerEntry, VoteLedger } from './types.js';

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
  /**
   * Whether the state directory takes writes, shared with the file store on the same directory
   * (its `writeHealth`), so both say the same. Default: the ledger's own (also when this one
   * belongs to another directory).
   */
  writeHealth?: WriteHealth;
  /** The backoff of the ledger's own write health's probe. Default 500 ms doubling up to 5 s. */
  probeDelays?: { firstMs: number; maxMs: number };
  /**
   * Bytes kept free for the records that finish votes (`<directory>/votes.journal.reserve`), given
   * up when the disk fills; 0 keeps none. Default 262 144 (256 KiB, about 5,000 finished votes).
   */
  reserveBytes?: number;
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
  /** Whether the journal's directory takes writes (the file store's, when it shares the directory). */
  readonly writeHealth: WriteHealth;
  warnings(): readonly string[];
  stats(): FileVoteLedgerStats;
  [Symbol.asyncDispose](): Promise<void>;
}

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
  const f = fileLedgerState(options);
  const requireOpen = (action: string): void => {
    if (f.phase === 'open') return;
    const why = f.phase === 'new' || f.phase === 'opening' ? 'call open() first' : 'the ledger is closed';
    throw new StoreError(`cannot ${action} ${f.path}: ${why}`, f.path);
  };
  const persist = (records: JournalRecord[]): Promise<void> => {
    if (records.length === 0) return f.committer.commit();
    for (const record of records) f.queued.push(recordLine(record));
    return f.committer.commit(f.committer.change());
  };
  const operations = createLedgerOperations(() => f.state, persist, requireOpen);
  const ledger: FileVoteLedger = {
    path: f.path,
    get writeHealth() {
      return f.health;
    },
    ...operations,
    recordPending(votes) {
      // Unwritable: new votes are refused before they touch memory, so the room left (the reserve's)
      // goes to the records of votes already acknowledged; a known key still gets its answer.
      if (f.phase === 'open' && !f.health.writable && votes.some((vote) => !f.state.has(vote.key))) {
        f.health.nudge();
        const reason = f.health.state().reason ?? 'the state directory cannot be written';
        const message = `cannot record new votes in ${f.path}: ${reason}; they are refused until a write there succeeds again`;
        return Promise.reject(new StoreError(message, f.path));
      }
      return operations.recordPending(votes);
    },
    warnings: () => [...f.warnings],
    open: () => open(f, ledger),
    has: (key) => f.state.has(key),
    deadLetters: async () => f.state.letters(),
    async compact(time) {
      requireOpen('compact');
      f.state.forget(time);
      // A rewrite needs room for a whole snapshot: not while the directory cannot be written.
      if (!f.health.writable) return;
      if (!f.rewriteWanted && (f.bytes < f.compactMinBytes || f.bytes < f.compactRatio * f.state.snapshotBytes())) return;
      f.rewriteWanted = true;
      await f.committer.commit(f.committer.change());
    },
    stats() {
      const counters = f.committer.stats();
      return { ...f.state.counts(), bytes: f.bytes, commits: counters.writes, failedCommits: counters.failedWrites, rewrites: f.rewrites };
    },
    close: () => close(f),
    [Symbol.asyncDispose]: () => ledger.close(),
    describe: () => `file ${f.path}`,
  };
  return ledger;
}

function fileLedgerState(options: FileVoteLedgerOptions): FileLedgerState {
  const keepKeysForMs = options.keepKeysForMs ?? 3_600_000;
  const fs = options.fs ?? nodeJournalFs;
  const now = options.now ?? Date.now;
  const path = join(options.directory, JOURNAL);
  const given = options.writeHealth;
  const shared = given !== undefined && resolve(given.directory) === resolve(options.directory) ? given : undefined;
  const f: FileLedgerState = {
    directory: options.directory,
    path,
    fs,
    now,
    keepKeysForMs,
    compactMinBytes: options.compactMinBytes ?? 1_048_576,
    compactRatio: options.compactRatio ?? 4,
    phase: 'new',
    state: createLedgerState(keepKeysForMs),
    handle: undefined,
    directoryHandle: undefined,
    queued: [],
    bytes: 0,
    rewriteWanted: false,
    headerOutdated: false,
    corruptAside: undefined,
    versionAside: undefined,
    warnings: [],
    rewrites: 0,
    closing: undefined,
    committer: createCommitter(() => commitWrite(f)),
    health: shared ?? ownHealth(options, fs, now),
    ownsHealth: shared === undefined,
    reserve: { path: `${path}${RESERVE_SUFFIX}`, bytes: options.reserveBytes ?? DEFAULT_RESERVE_BYTES, held: false },
    restoreWanted: false,
    restoreError: undefined,
    removeProbe: undefined,
  };
  return f;
}

function ownHealth(options: FileVoteLedgerOptions, fs: JournalFs, now: () => number): WriteHealth {
  return createWriteHealth({ directory: options.directory, fs, now, ...(options.probeDelays ? { probeDelays: options.probeDelays } : {}) });
}

/**
 * The committer's write: an append (or the rewrite), then the reserve taken back when a probe
 * asked; the outcome told to the write health.
 */
async function commitWrite(f: FileLedgerState): Promise<void> {
  try {
    await (f.rewriteWanted ? rewrite(f) : append(f));
  } catch (error) {
    f.health.failed(error);
    throw error;
  }
  if (f.restoreWanted) {
    f.restoreWanted = false;
    // Not thrown: the records just written are on disk, whatever the reserve does.
    const restore = f.reserve.held ? touchReserve(f.fs, f.reserve) : takeReserve(f.fs, f.reserve);
    f.restoreError = await restore.then(() => undefined, (error: unknown) => error);
  }
  f.health.succeeded();
}

/** The ledger's part of the write health's probe: its queued records written, and its reserve taken back. */
async function probe(f: FileLedgerState): Promise<void> {
  f.restoreWanted = true;
  await f.committer.commit(f.committer.change());
  if (f.restoreError !== undefined) throw f.restoreError;
}

async function open(f: FileLedgerState, ledger: FileVoteLedger): Promise<LedgerEntry[]> {
  const { path } = f;
  if (f.phase === 'open') return f.state.pending();
  if (f.phase === 'opening' || f.phase === 'closing') throw new StoreError(`cannot open ${path} while it is ${f.phase}`, path);
  if (openHere.has(resolve(path))) throw new StoreError(`${path} is already open in this process: one ledger per state directory`, path);
  openHere.add(resolve(path));
  f.phase = 'opening';
  f.state = createLedgerState(f.keepKeysForMs);
  f.warnings = [];
  f.queued = [];
  f.rewriteWanted = false;
  f.headerOutdated = false;
  f.corruptAside = undefined;
  f.versionAside = undefined;
  try {
    await prepareDirectory(f);
    const replay = await load(f);
    f.phase = 'open';
    const aside = f.corruptAside;
    const rewritesBefore = f.rewrites;
    await ledger.compact(f.now()).catch((error: unknown) => f.warnings.push(`could not compact ${path} on open: ${fsReason(error)}`));
    if (replay !== undefined && aside !== undefined) f.warnings.push(damageWarning(f, replay, f.rewrites > rewritesBefore, f.corruptAside));
    f.corruptAside = undefined;
    f.removeProbe = f.health.addProbe(() => probe(f));
    await takeReserve(f.fs, f.reserve).then(
      // Writable again, if an earlier open of this ledger ended unwritable: the probe says so.
      () => f.health.succeeded(),
      (error: unknown) => {
        // The ledger opens all the same: what is pending runs, and new votes wait for room.
        f.health.failed(error);
        const problem = describeWriteProblem(f.directory, error);
        f.warnings.push(
          `could not keep ${f.reserve.bytes} bytes free for finished votes in ${f.reserve.path}: ${problem}; ` +
            'new votes are refused until the directory takes writes again',
        );
      },
    );
    return f.state.pending();
  } catch (error) {
    f.phase = 'new';
    await release(f);
    throw error;
  }
}

function close(f: FileLedgerState): Promise<void> {
  if (f.phase !== 'open') return f.closing ?? Promise.resolve();
  f.phase = 'closing';
  f.removeProbe?.();
  f.removeProbe = undefined;
  f.closing = (async () => {
    try {
      await f.committer.commit();
    } catch (error) {
      // Said in full: which votes this costs a second reward, and why.
      throw new LedgerCloseError(f.path, describeWriteProblem(f.directory, error), unwrittenRecords(f.queued), error);
    } finally {
      await release(f);
      if (f.ownsHealth) f.health.close();
      f.phase = 'closed';
      f.closing = undefined;
    }
  })();
  return f.closing;
}
