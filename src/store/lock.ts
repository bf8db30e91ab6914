import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { errnoCode, fsReason, StoreError, STATE_DIRECTORY_SETTING } from './errors.js';
import type { FileStoreFs } from './fs.js';
import { timerDelay } from '../contract/timer-delay.js';

/** Who holds a state directory. Only `src/cli` knows these; embedded agents usually pass none. */
export interface LockOwner {
  pid: number;
  host: string;
}

/** The content of `state.lock`. */
export interface LockRecord {
  pid?: number;
  host?: string;
  startedAt?: string;
  /** The process of a sharded bot that holds it (`shard 1 of 2`), when the agent runs in one. */
  botProcess?: string;
}

/** What {@link judgeLock} concludes about an existing lock. */
export type LockVerdict =
  | { kind: 'stale'; reason: string }
  | { kind: 'live'; reason: string }
  /** Nothing says whether the owner lives: watch whether its heartbeat moves. */
  | { kind: 'unknown' };

/** What {@link judgeLock} needs to know about this process. */
export interface LockJudgeContext {
  owner?: LockOwner;
  isProcessAlive?: (pid: number) => boolean;
  staleMs: number;
}

/**
 * Decides whether an existing lock may be taken over (pure). A lock on this host whose pid is
 * ours is left from an earlier life of this process (a container restarted as pid 1); one whose
 * pid no longer runs is stale; otherwise only an untouched heartbeat (`ageMs` since the owner last
 * refreshed the file) says the owner is gone.
 */
export function judgeLock(record: LockRecord | undefined, ageMs: number, context: LockJudgeContext): LockVerdict {
  const { owner, isProcessAlive, staleMs } = context;
  if (record !== undefined && owner !== undefined && record.host === owner.host && record.pid !== undefined) {
    if (record.pid === owner.pid) {
      return { kind: 'stale', reason: `it names this process (pid ${record.pid}), so it is left from an earlier run` };
    }
    if (isProcessAlive !== undefined) {
      return isProcessAlive(record.pid)
        ? { kind: 'live', reason: `pid ${record.pid} still runs on ${record.host}` }
        : { kind: 'stale', reason: `pid ${record.pid} no longer runs on ${record.host}` };
    }
  }
  if (ageMs > staleMs) return { kind: 'stale', reason: `it was not refreshed for ${Math.round(ageMs / 1000)} s` };
  return { kind: 'unknown' };
}

/** `pid 1234 on host x since 2024-05-01T12:00:00.000Z` (`the agent of shard 1 of 2 (pid unknown) ...`), with what is known. */
export function describeLockOwner(record: LockRecord | undefined): string {
  if (record === undefined) return 'an agent that left no readable lock';
  const pid = record.pid === undefined ? 'pid unknown' : `pid ${record.pid}`;
  const who =
    record.botProcess !== undefined
      ? `the agent of ${record.botProcess} (${pid})`
      : record.pid === undefined
        ? 'an agent (pid unknown)'
        : pid;
  const where = record.host === undefined ? '' : ` on host ${record.host}`;
  const since = record.startedAt === undefined ? '' : ` since ${record.startedAt}`;
  return `${who}${where}${since}`;
}

/** The content of `state.lock`, or undefined when it is not a lock record. */
export function parseLockRecord(text: string): LockRecord | undefined {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
    const { pid, host, startedAt, botProcess } = value as Record<string, unknown>;
    return {
      ...(typeof pid === 'number' ? { pid } : {}),
      ...(typeof host === 'string' ? { host } : {}),
      ...(typeof startedAt === 'string' ? { startedAt } : {}),
      ...(typeof botProcess === 'string' ? { botProcess } : {}),
    };
  } catch {
    return undefined;
  }
}

/** Options of {@link acquireStateLock}. */
export interface StateLockOptions extends LockJudgeContext {
  fs: FileStoreFs;
  directory: string;
  now: () => number;
  /** The process of a sharded bot this agent runs in (see `FileStoreOptions.botProcess`). */
  botProcess?: string;
  /** The setting that moves the directory, as the messages name it. Default `state.directory (LISTING_AGENT_STATE_DIRECTORY)`. */
  setting?: string;
}

/** A held `state.lock`: refreshed while held, removed by `release()`. */
export interface StateLock {
  readonly path: string;
  /** Locks that were taken over, in words, for the agent to log. */
  readonly warnings: string[];
  release(): Promise<void>;
}

/** Directories locked by this process: a second store on one of them fails at once. */
const heldHere = new Set<string>();

const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

/** How often, at most, a lock nothing can judge is looked at while its owner's heartbeat is awaited, ms. */
const WATCH_EVERY_MS = 1_000;

/** One call of {@link acquireStateLock}: its options, the lock's path, and what it took over. */
interface Attempt {
  options: StateLockOptions;
  path: string;
  warnings: string[];
}

/** What {@link inspect} read of an existing lock. */
interface SeenLock {
  record: LockRecord | undefined;
  ino: number;
  mtimeMs: number;
}

/**
 * Takes `<directory>/state.lock` (created with `wx`, holding `{ pid, host, startedAt }`), taking
 * over a stale lock, or throws a `StoreError` naming the owner and the fix. While held, the file's
 * mtime is refreshed every `staleMs / 3`: the heartbeat that lets an agent elsewhere (another host,
 * a recreated container, an embedded agent that cannot check pids) tell a dead owner from a live one.
 * Why this is ours and not `proper-lockfile`: docs/decisions/less-by-hand.md.
 */
export async function acquireStateLock(options: StateLockOptions): Promise<StateLock> {
  const attempt: Attempt = { options, path: join(options.directory, 'state.lock'), warnings: [] };
  const key = resolve(options.directory);
  if (heldHere.has(key)) {
    const seen = await inspect(attempt).catch(() => undefined);
    throw busy(attempt, seen?.record, 'by this process');
  }
  // Reserved before the first await below, so that two opens racing in this process cannot both win.
  heldHere.add(key);
  let ino: number;
  try {
    ino = await takeLock(attempt);
  } catch (error) {
    heldHere.delete(key);
    throw error;
  }
  return holdLock(attempt, ino, key);
}

/** What to do when a shard of this bot holds the lock: one agent for the whole bot, in the manager's process. */
const SHARD_FIX =
  "the bot creates an agent in each shard; create the agent in the manager's process, not in each shard (pass the ShardingManager or " +
    "ClusterManager as `discord` to createListingAgent there)";

function busy({ options, path }: Attempt, record: LockRecord | undefined, why: string): StoreError {
  const used = `the state directory ${options.directory} is already used by ${describeLockOwner(record)} (${why})`;
  // A live process of a sharded bot on this host: a sibling shard (or another shard of this bot) that made its own agent.
  if (record?.botProcess !== undefined && record.host === hostname()) return new StoreError(`${used}: ${SHARD_FIX}`, path);
  return new StoreError(
    `${used}; stop that agent or use another ${options.setting ?? STATE_DIRECTORY_SETTING}; delete ${path} if that agent is gone`,
    path,
  );
}

/** The lock as it is now, or undefined when there is none (released meanwhile: try again). */
async function inspect({ options, path }: Attempt): Promise<SeenLock | undefined> {
  try {
    const [text, stat] = await Promise.all([options.fs.readFile(path, 'utf8'), options.fs.stat(path)]);
    return { record: parseLockRecord(text), ino: stat.ino, mtimeMs: stat.mtimeMs };
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return undefined;
    throw new StoreError(`cannot read ${path}: ${fsReason(error)} — delete it if no agent uses ${options.directory}`, path, {
      cause: error,
    });
  }
}

/** Creates the lock: its inode when created, undefined when one exists already. */
async function create({ options, path }: Attempt): Promise<number | undefined> {
  const { fs, directory } = options;
  const setting = options.setting ?? STATE_DIRECTORY_SETTING;
  const shard = options.botProcess === undefined ? {} : { host: hostname(), botProcess: options.botProcess };
  const record: LockRecord = { ...shard, ...options.owner, startedAt: new Date(options.now()).toISOString() };
  let handle;
  try {
    handle = await fs.open(path, 'wx', 0o600);
  } catch (error) {
    if (errnoCode(error) === 'EEXIST') return undefined;
    throw new StoreError(
      `cannot write the state directory ${directory}: ${fsReason(error)} — set ${setting} to a writable directory`,
      path,
      { cause: error },
    );
  }
  try {
    await handle.writeFile(`${JSON.stringify(record)}\n`);
    await handle.close();
    return (await fs.stat(path)).ino;
  } catch (error) {
    await handle.close().catch(() => undefined);
    await fs.unlink(path).catch(() => undefined);
    throw new StoreError(`cannot write ${path}: ${fsReason(error)} — set ${setting} to a writable directory`, path, { cause: error });
  }
}

/** Removes the stale lock `seen`, unless another agent replaced it meanwhile. */
async function takeOver(attempt: Attempt, seen: SeenLock, reason: string): Promise<void> {
  const { fs } = attempt.options;
  const { path } = attempt;
  // Rename, then check it was the lock we judged: two agents taking over at once must not both win.
  const aside = `${path}.stale-${randomBytes(4).toString('hex')}`;
  try {
    await fs.rename(path, aside);
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return;
    throw new StoreError(`cannot take over ${path}: ${fsReason(error)}`, path, { cause: error });
  }
  const moved = await fs.stat(aside).catch(() => undefined);
  if (moved !== undefined && moved.ino !== seen.ino) {
    await fs.link(aside, path).catch(() => undefined);
    await fs.unlink(aside).catch(() => undefined);
    throw busy(attempt, undefined, 'another agent took the lock at the same moment');
  }
  await fs.unlink(aside).catch(() => undefined);
  attempt.warnings.push(`took over ${path} from ${describeLockOwner(seen.record)}: ${reason}`);
}

/**
 * The verdict on `seen`; a lock nothing can judge is watched until its owner's heartbeat is due:
 * a live owner refreshes the file before then.
 */
async function judgeOrWatch(attempt: Attempt, seen: SeenLock): Promise<Exclude<LockVerdict, { kind: 'unknown' }> | 'gone'> {
  const { now, staleMs } = attempt.options;
  const verdict = judgeLock(seen.record, now() - seen.mtimeMs, attempt.options);
  if (verdict.kind !== 'unknown') return verdict;
  const waitMs = Math.min(staleMs, Math.max(0, staleMs - (now() - seen.mtimeMs))) + 25;
  // Looked at again every staleMs / 6 (at most a second): an owner that refreshes its lock every
  // staleMs / 3 is seen within a beat of its own, and the wait ends there.
  const step = Math.max(10, Math.min(WATCH_EVERY_MS, Math.floor(staleMs / 6)));
  for (let waited = 0; waited < waitMs; ) {
    const ms = Math.min(step, waitMs - waited);
    await sleep(ms);
    waited += ms;
    const again = await inspect(attempt);
    if (again === undefined) return 'gone';
    if (again.ino !== seen.ino || again.mtimeMs !== seen.mtimeMs) throw busy(attempt, again.record, 'its owner keeps the lock fresh');
  }
  return { kind: 'stale', reason: `it was not refreshed for ${Math.round((now() - seen.mtimeMs) / 1000)} s` };
}

/** Creates the lock, taking over stale ones, a few times at most; its inode. */
async function takeLock(attempt: Attempt): Promise<number> {
  for (let round = 0; round < 5; round++) {
    const ino = await create(attempt);
    if (ino !== undefined) return ino;
    const seen = await inspect(attempt);
    if (seen === undefined) continue;
    const verdict = await judgeOrWatch(attempt, seen);
    if (verdict === 'gone') continue;
    if (verdict.kind === 'live') throw busy(attempt, seen.record, verdict.reason);
    await takeOver(attempt, seen, verdict.reason);
  }
  throw busy(attempt, undefined, 'the lock kept changing hands');
}

/** The held lock: its heartbeat started, and a release that removes the file only if still ours. */
function holdLock({ options, path, warnings }: Attempt, ino: number, key: string): StateLock {
  const { fs, now, staleMs } = options;
  const heartbeat = setInterval(() => {
    const time = new Date(now());
    fs.utimes(path, time, time).catch(() => undefined);
  }, timerDelay(Math.max(10, Math.floor(staleMs / 3))));
  heartbeat.unref();

  let released = false;
  return {
    path,
    warnings,
    async release() {
      if (released) return;
      released = true;
      clearInterval(heartbeat);
      heldHere.delete(key);
      // Remove the lock only if it is still ours: an agent that judged us dead may hold it now.
      const current = await fs.stat(path).catch(() => undefined);
      if (current?.ino === ino) await fs.unlink(path).catch(() => undefined);
    },
  };
}
