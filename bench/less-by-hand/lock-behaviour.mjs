/**
 * The state lock (src/store/lock.ts) next to proper-lockfile, in the two situations a lock is for
 * (docs/decisions/less-by-hand.md):
 *
 *   A. restart after kill -9: a holder is killed; how long until a new agent on the same host
 *      holds the lock? Both with a 15 s stale time (our default; proper-lockfile's is 10 s).
 *   B. two agents take over the same stale lock at once: both read the stale lock before either
 *      removes it, and the second one removes it only after the first holds its new lock (it was
 *      descheduled for a moment). The injected fs makes this interleaving certain instead
 *      of rare; how many end up believing they hold the lock?
 *
 * Run after `npm run build`, with the candidate installed without saving it:
 *   npm i --no-save proper-lockfile && node bench/less-by-hand/lock-behaviour.mjs
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { hostname, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const lockfile = require('proper-lockfile');
const gracefulFs = require('graceful-fs');
const { acquireStateLock } = await import('../../dist/store/lock.js');
const { nodeFileStoreFs } = await import('../../dist/store/fs.js');

const STALE_MS = 15_000;
const isProcessAlive = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
};

const HOLDER = {
  ours: `
    const { acquireStateLock } = await import(${JSON.stringify(new URL('../../dist/store/lock.js', import.meta.url).href)});
    const { nodeFileStoreFs } = await import(${JSON.stringify(new URL('../../dist/store/fs.js', import.meta.url).href)});
    await acquireStateLock({ fs: nodeFileStoreFs, directory: process.env.DIR, now: Date.now, staleMs: ${STALE_MS}, owner: { pid: process.pid, host: ${JSON.stringify(hostname())} } });
    console.log('held'); setInterval(() => {}, 1e9);`,
  'proper-lockfile': `
    const { createRequire } = await import('node:module');
    const lockfile = createRequire(${JSON.stringify(import.meta.url)})('proper-lockfile');
    await lockfile.lock(process.env.DIR, { lockfilePath: process.env.DIR + '/state.lock', realpath: false, stale: ${STALE_MS} });
    console.log('held'); setInterval(() => {}, 1e9);`,
};

async function killedHolder(kind, dir) {
  const child = spawn(process.execPath, ['--input-type=module', '-e', HOLDER[kind]], { env: { ...process.env, DIR: dir }, stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk) => String(chunk).includes('held') && resolve());
    child.on('exit', () => reject(new Error(`${kind} holder exited`)));
  });
  child.kill('SIGKILL');
  await new Promise((resolve) => child.once('exit', resolve));
}

async function restartAfterKill(kind) {
  const dir = await mkdtemp(join(tmpdir(), 'lock-bench-'));
  try {
    await killedHolder(kind, dir);
    const started = performance.now();
    if (kind === 'ours') {
      const lock = await acquireStateLock({ fs: nodeFileStoreFs, directory: dir, now: Date.now, staleMs: STALE_MS, owner: { pid: process.pid, host: hostname() }, isProcessAlive });
      await lock.release();
    } else {
      // Retried every 500 ms, as an agent that waits would.
      const release = await lockfile.lock(dir, { lockfilePath: join(dir, 'state.lock'), realpath: false, stale: STALE_MS, retries: { retries: 100, factor: 1, minTimeout: 500, maxTimeout: 500 } });
      await release();
    }
    return performance.now() - started;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A promise and the function that resolves it. */
function signal() {
  let resolve;
  const promise = new Promise((done) => (resolve = done));
  return { promise, resolve };
}

/** Holds back the first `count` calls until all of them have arrived. */
function barrier(count) {
  let arrived = 0;
  let open;
  const opened = new Promise((resolve) => (open = resolve));
  return async () => {
    if (arrived >= count) return;
    arrived += 1;
    if (arrived === count) open();
    await opened;
  };
}

async function takeOverAtOnce(kind) {
  const dir = await mkdtemp(join(tmpdir(), 'lock-bench-'));
  const alias = `${dir}-alias`; // the same directory by another name: two keys for each library's in-process table
  await symlink(dir, alias);
  const lockPath = join(dir, 'state.lock');
  try {
    const old = new Date(Date.now() - 60_000);
    if (kind === 'ours') {
      await writeFile(lockPath, JSON.stringify({ pid: 1, host: 'elsewhere' }));
      await utimes(lockPath, old, old);
      const wait = barrier(2);
      const recreated = signal();
      let renames = 0;
      const fs = {
        ...nodeFileStoreFs,
        async stat(path) {
          if (path.endsWith('state.lock')) await wait();
          return nodeFileStoreFs.stat(path);
        },
        // The second take-over moves the lock aside only after the first has created its own.
        async rename(from, to) {
          if (from === lockPath && ++renames === 2) await recreated.promise;
          return nodeFileStoreFs.rename(from, to);
        },
      };
      const attempt = (directory) =>
        acquireStateLock({ fs, directory, now: Date.now, staleMs: STALE_MS }).then(
          (lock) => (recreated.resolve(), lock),
          () => (recreated.resolve(), undefined),
        );
      const locks = await Promise.all([attempt(dir), attempt(alias)]);
      await Promise.all(locks.map((lock) => lock?.release()));
      return locks.filter(Boolean).length;
    }
    const { mkdir } = await import('node:fs/promises');
    await mkdir(lockPath);
    await utimes(lockPath, old, old);
    const wait = barrier(2);
    const recreated = signal();
    let removals = 0;
    const fs = {
      ...gracefulFs,
      stat: (path, callback) => void wait().then(() => gracefulFs.stat(path, callback)),
      // The second take-over removes the lock only after the first has created its own.
      rmdir: (path, callback) => void (++removals === 2 ? recreated.promise : Promise.resolve()).then(() => gracefulFs.rmdir(path, callback)),
    };
    const attempt = (file) =>
      lockfile.lock(file, { lockfilePath: lockPath, realpath: false, stale: STALE_MS, fs, onCompromised: () => undefined }).then(
        (release) => (recreated.resolve(), release),
        () => (recreated.resolve(), undefined),
      );
    const releases = await Promise.all([attempt(dir), attempt(alias)]);
    await Promise.all(releases.map((release) => release?.().catch(() => undefined)));
    return releases.filter(Boolean).length;
  } finally {
    await rm(alias, { force: true });
    await rm(dir, { recursive: true, force: true });
  }
}

console.log(`load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}, node ${process.version}, stale time ${STALE_MS} ms\n`);
console.log('| lock | A. restart after kill -9: ms to hold the lock | B. agents holding the lock after a simultaneous take-over of a stale lock |');
console.log('| --- | ---: | ---: |');
for (const kind of ['ours', 'proper-lockfile']) {
  const a = await restartAfterKill(kind);
  const b = await takeOverAtOnce(kind);
  console.log(`| ${kind} | ${a.toFixed(0)} | ${b} of 2 |`);
}
