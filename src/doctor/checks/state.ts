import { constants } from 'node:fs';
import { access, readFile, stat, statfs } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { parseStateDocument } from '../../store/document.js';
import { errnoCode, fsReason, STATE_DIRECTORY_SETTING } from '../../store/errors.js';
import { DEFAULT_LOCK_STALE_MS } from '../../store/file.js';
import { nodeFileStoreFs } from '../../store/fs.js';
import { describeLockOwner, judgeLock, parseLockRecord } from '../../store/lock.js';
import { classifyWriteError, describeWriteProblem, writeProbeFile } from '../../store/write-health.js';
import { DEFAULT_RESERVE_BYTES, RESERVE_SUFFIX } from '../../votes/ledger-file-space.js';
import { doctorStateDirectory } from '../deps.js';
import { formatAge } from '../runner.js';
import { fail, ok, skip, warn, type CheckOutcome, type DoctorCheck, type DoctorDeps } from '../types.js';

const IN_REDIS = 'state.redis is set: the state is in Redis (see redis.server)';
const FIX_DIRECTORY = `make it a directory the user running the agent can write (chown), or set ${STATE_DIRECTORY_SETTING}`;

/** The nearest existing ancestor of `path` (the agent creates the rest). */
async function nearestExisting(path: string): Promise<string> {
  let current = path;
  for (;;) {
    const parent = dirname(current);
    if (parent === current) return current;
    current = parent;
    if (await stat(current).then(() => true, () => false)) return current;
  }
}

/** Below this much room, the doctor warns: twice the vote ledger's reserve. */
const LOW_ROOM_BYTES = 2 * DEFAULT_RESERVE_BYTES;

/** `12.3 MiB` (pure). */
export function formatBytes(bytes: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${bytes} bytes` : `${value.toFixed(1)} ${units[unit]}`;
}

/** The fix for a state directory that refuses writes, by why (pure). */
export function unwritableFix(error: unknown): string {
  switch (classifyWriteError(error)) {
    case 'no_space':
      return `free space on that file system (a running agent refuses new votes until it can write, and takes up again by itself), or ` +
        `set ${STATE_DIRECTORY_SETTING} to a roomier one`;
    case 'read_only':
      return `remount it read-write (a running agent takes up again by itself), or set ${STATE_DIRECTORY_SETTING} to a writable directory`;
    default:
      return FIX_DIRECTORY;
  }
}

/** The room left, and what the vote ledger's reserve says about the past (pure). */
export function roomOutcome(
  directory: string,
  freeBytes: number | undefined,
  reserveBytes: number | undefined,
  stateNote: string,
): CheckOutcome {
  const free = freeBytes === undefined ? '' : ` (${formatBytes(freeBytes)} free)`;
  // A reserve of 0 bytes was given up: the disk filled while an agent ran (it takes it back by itself).
  const reserve =
    reserveBytes === 0
      ? '; the vote ledger gave up its reserve for finished votes when the disk filled, and takes it back once there is room'
      : '';
  const details = { directory, exists: true, freeBytes: freeBytes ?? null };
  if (freeBytes !== undefined && freeBytes < LOW_ROOM_BYTES) {
    return warn(
      `only ${formatBytes(freeBytes)} free on the device holding ${directory}${reserve}`,
      `free space there: once it is full the agent refuses new votes (webhook deliveries answered 503) until it can write again`,
      details,
    );
  }
  return ok(`${directory} is writable${free}; ${stateNote}${reserve}`, details);
}

/** The free bytes on the file system of `directory`, when the platform says. */
async function freeBytes(directory: string): Promise<number | undefined> {
  try {
    const info = await statfs(directory);
    return Number(info.bavail) * Number(info.bsize);
  } catch {
    return undefined;
  }
}

/** The size of the vote ledger's reserve file, undefined when there is none. */
async function reserveSize(directory: string): Promise<number | undefined> {
  return stat(join(directory, `votes.journal${RESERVE_SUFFIX}`)).then(
    (info) => info.size,
    () => undefined,
  );
}

/** What `state.json` holds, for the summary; a problem with it as an outcome. */
async function stateFileNote(directory: string, now: number): Promise<{ note: string } | CheckOutcome> {
  const path = join(directory, 'state.json');
  let text: string;
  let mtimeMs: number;
  try {
    [text, mtimeMs] = await Promise.all([readFile(path, 'utf8'), stat(path).then((s) => s.mtimeMs)]);
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return { note: 'no state.json yet' };
    return fail(`cannot read ${path}: ${fsReason(error)}`, FIX_DIRECTORY);
  }
  const parsed = parseStateDocument(text);
  if (parsed.ok) return { note: `state.json holds ${parsed.entries.size} keys, written ${formatAge(now - mtimeMs)} ago` };
  if (parsed.newerVersion !== undefined) {
    return fail(
      `${path} was written by a newer listing-agent (${parsed.reason}): this one refuses to replace it`,
      'run the newer listing-agent, or move the file away to start this one afresh',
    );
  }
  return warn(
    `${path} is not a state document (${parsed.reason})`,
    'nothing to do: the agent sets it aside at its start and goes on from state.json.prev',
  );
}

/** `state.directory`: the agent can write its state directory (or create it), and state.json is sound. */
export const stateDirectoryCheck: DoctorCheck = {
  name: 'state.directory',
  paths: ['state.directory'],
  async run(deps): Promise<CheckOutcome> {
    if (deps.config.state.redis !== undefined) return skip(IN_REDIS);
    const directory = doctorStateDirectory(deps);
    const info = await stat(directory).catch((error: unknown) => error as NodeJS.ErrnoException);
    if (info instanceof Error) {
      if (errnoCode(info) !== 'ENOENT') return fail(`cannot use the state directory ${directory}: ${fsReason(info)}`, FIX_DIRECTORY);
      const parent = await nearestExisting(directory);
      const writable = await access(parent, constants.W_OK).then(
        () => true,
        () => false,
      );
      const parentIsDirectory = await stat(parent).then(
        (s) => s.isDirectory(),
        () => false,
      );
      if (!writable || !parentIsDirectory)
        return fail(`the state directory ${directory} does not exist, and ${parent} is not a directory this user can write`, FIX_DIRECTORY);
      return ok(`${directory} does not exist yet: the agent creates it (${parent} is writable)`, { directory, exists: false });
    }
    if (!info.isDirectory()) return fail(`the state directory ${directory} is a file, not a directory`, FIX_DIRECTORY);
    try {
      // One page written and synced: an empty file would pass on a full disk.
      await writeProbeFile(nodeFileStoreFs, directory);
    } catch (error) {
      return fail(describeWriteProblem(directory, error), unwritableFix(error), {
        directory,
        exists: true,
        problem: classifyWriteError(error),
      });
    }
    const note = await stateFileNote(directory, deps.now());
    if ('status' in note) return { ...note, details: { directory, exists: true } };
    return roomOutcome(directory, await freeBytes(directory), await reserveSize(directory), note.note);
  },
};

/** What `state.lock` says about the agent that holds the directory. */
async function lockOutcome(deps: DoctorDeps, path: string): Promise<CheckOutcome> {
  let text: string;
  let mtimeMs: number;
  try {
    [text, mtimeMs] = await Promise.all([readFile(path, 'utf8'), stat(path).then((s) => s.mtimeMs)]);
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return ok(`no agent holds the state directory (no ${path})`, { held: false });
    return fail(`cannot read ${path}: ${fsReason(error)}`, `delete ${path} if no agent uses the directory`);
  }
  const record = parseLockRecord(text);
  const ageMs = deps.now() - mtimeMs;
  const owner = describeLockOwner(record);
  const details = {
    held: true,
    pid: record?.pid ?? null,
    host: record?.host ?? null,
    startedAt: record?.startedAt ?? null,
    heartbeatAgeMs: Math.round(ageMs),
  };
  const verdict = judgeLock(record, ageMs, {
    ...(deps.owner ? { owner: deps.owner } : {}),
    ...(deps.isProcessAlive ? { isProcessAlive: deps.isProcessAlive } : {}),
    staleMs: DEFAULT_LOCK_STALE_MS,
  });
  switch (verdict.kind) {
    case 'live':
      return ok(`held by a running agent: ${owner} (${verdict.reason})`, details);
    case 'unknown':
      return ok(`held by ${owner}, heartbeat ${formatAge(ageMs)} ago (its pid cannot be checked from this host)`, details);
    case 'stale':
      return warn(
        `${path} is left over by ${owner}: ${verdict.reason}`,
        `nothing to do: the next agent takes it over by itself (or delete ${path})`,
        details,
      );
  }
}

/** `state.lock`: who holds the state directory, and whether that agent still lives. */
export const stateLockCheck: DoctorCheck = {
  name: 'state.lock',
  paths: ['state.directory'],
  async run(deps) {
    if (deps.config.state.redis !== undefined)
      return skip('state.redis is set: agents share the state in Redis and take no lock (see redis.leader)');
    return lockOutcome(deps, join(doctorStateDirectory(deps), 'state.lock'));
  },
};
