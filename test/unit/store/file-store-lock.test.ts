import { readdir, readFile, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { StoreError } from '../../../src/store/errors.js';
import { createFileStore, type FileStore, type FileStoreOptions } from '../../../src/store/file.js';
import { judgeLock } from '../../../src/store/lock.js';
import { removeTempDirs, tempDir } from './helpers.js';

const opened: FileStore[] = [];
function fileStore(options: FileStoreOptions): FileStore {
  const store = createFileStore(options);
  opened.push(store);
  return store;
}

afterEach(async () => {
  await Promise.all(opened.splice(0).map((store) => store.close().catch(() => undefined)));
  await removeTempDirs();
});

const SINCE = '2024-05-01T12:00:00.000Z';
const writeLock = (dir: string, record: object) => writeFile(join(dir, 'state.lock'), JSON.stringify(record));
const readLock = async (dir: string) => JSON.parse(await readFile(join(dir, 'state.lock'), 'utf8')) as Record<string, unknown>;

describe('state.lock', () => {
  it('is created at open with the owner and removed at close', async () => {
    const dir = await tempDir();
    const store = fileStore({ directory: dir, owner: { pid: 4242, host: 'box' }, now: () => Date.parse(SINCE) });
    await store.open();
    expect(await readLock(dir)).toEqual({ pid: 4242, host: 'box', startedAt: SINCE });
    await store.close();
    expect(await readdir(dir)).toEqual([]);
  });

  it('keeps a second store in this process off the directory, and lets it in after close', async () => {
    const dir = await tempDir();
    const first = fileStore({ directory: dir });
    await first.open();
    const second = fileStore({ directory: dir });
    await expect(second.open()).rejects.toThrow(/already used by an agent \(pid unknown\) since .* \(by this process\)/);
    await first.close();
    await second.open();
  });

  it('refuses an agent that still runs, naming it and the fix', async () => {
    const dir = await tempDir();
    await writeLock(dir, { pid: 1234, host: 'x', startedAt: SINCE });
    const error = await fileStore({ directory: dir, owner: { pid: 1, host: 'x' }, isProcessAlive: (pid) => pid === 1234 })
      .open()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect((error as Error).message).toBe(
      `the state directory ${dir} is already used by pid 1234 on host x since ${SINCE} (pid 1234 still runs on x); ` +
        `stop that agent or use another state.directory (LISTING_AGENT_STATE_DIRECTORY); delete ${join(dir, 'state.lock')} if that agent is gone`,
    );
    expect(await readLock(dir)).toEqual({ pid: 1234, host: 'x', startedAt: SINCE }); // untouched
  });

  it('takes over the lock of a dead agent on this host, with a warning', async () => {
    const dir = await tempDir();
    await writeLock(dir, { pid: 1234, host: 'x', startedAt: SINCE });
    const store = fileStore({ directory: dir, owner: { pid: 99, host: 'x' }, isProcessAlive: () => false });
    await store.open();
    expect(store.warnings()).toEqual([`took over ${join(dir, 'state.lock')} from pid 1234 on host x since ${SINCE}: pid 1234 no longer runs on x`]);
    expect(await readLock(dir)).toMatchObject({ pid: 99, host: 'x' });
  });

  it('takes over a lock naming this very pid (a restarted container runs as pid 1 again)', async () => {
    const dir = await tempDir();
    await writeLock(dir, { pid: 1, host: 'container', startedAt: SINCE });
    const store = fileStore({ directory: dir, owner: { pid: 1, host: 'container' }, isProcessAlive: () => true });
    await store.open();
    expect(store.warnings()[0]).toMatch(/names this process \(pid 1\)/);
  });

  it('takes over a lock whose heartbeat is old when it cannot check the pid (another host, no callback)', async () => {
    const dir = await tempDir();
    await writeLock(dir, { pid: 7, host: 'elsewhere', startedAt: SINCE });
    const old = new Date(Date.now() - 60_000);
    await utimes(join(dir, 'state.lock'), old, old);
    const store = fileStore({ directory: dir, owner: { pid: 8, host: 'here' }, isProcessAlive: () => true });
    await store.open();
    expect(store.warnings()[0]).toMatch(/from pid 7 on host elsewhere .*not refreshed for 60 s/);
  });

  it('waits out a fresh lock it cannot judge: taken over if nobody refreshes it, refused if someone does', async () => {
    const dir = await tempDir();
    await writeLock(dir, { startedAt: SINCE });
    const started = Date.now();
    const store = fileStore({ directory: dir, lockStaleMs: 200 });
    await store.open();
    expect(Date.now() - started).toBeGreaterThanOrEqual(150);
    expect(store.warnings()[0]).toMatch(/not refreshed/);
    await store.close();

    await writeLock(dir, { pid: 5, host: 'elsewhere', startedAt: SINCE });
    const heartbeat = setInterval(() => void utimes(join(dir, 'state.lock'), new Date(), new Date()).catch(() => undefined), 30);
    try {
      await expect(fileStore({ directory: dir, lockStaleMs: 200 }).open()).rejects.toThrow(/already used by pid 5 on host elsewhere .*keeps the lock fresh/);
    } finally {
      clearInterval(heartbeat);
    }
  });

  it('refuses as soon as it sees the owner refresh the lock, without waiting out lockStaleMs', async () => {
    const dir = await tempDir();
    await writeLock(dir, { pid: 5, host: 'elsewhere', startedAt: SINCE });
    const started = Date.now();
    // The owner's heartbeat, once, 200 ms into the wait (an agent refreshes its lock every lockStaleMs / 3).
    const beat = setTimeout(() => void utimes(join(dir, 'state.lock'), new Date(), new Date()).catch(() => undefined), 200);
    try {
      await expect(fileStore({ directory: dir, lockStaleMs: 6_000 }).open()).rejects.toThrow(/already used by pid 5 on host elsewhere .*keeps the lock fresh/);
    } finally {
      clearTimeout(beat);
    }
    // Looked at every lockStaleMs / 6 (at most a second): the refusal comes within about a second, not after 6.
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('keeps its own lock fresh while open', async () => {
    const dir = await tempDir();
    const store = fileStore({ directory: dir, lockStaleMs: 90 });
    await store.open();
    const lockPath = join(dir, 'state.lock');
    const past = new Date(Date.now() - 10_000);
    await utimes(lockPath, past, past);
    const { stat } = await import('node:fs/promises');
    await expect.poll(async () => Date.now() - (await stat(lockPath)).mtimeMs, { timeout: 2_000, interval: 10 }).toBeLessThan(5_000);
  });
});

describe('judgeLock', () => {
  const context = { owner: { pid: 10, host: 'h' }, staleMs: 15_000 };

  it('trusts the pid check on the same host, and only there', () => {
    const record = { pid: 20, host: 'h' };
    expect(judgeLock(record, 0, { ...context, isProcessAlive: () => true })).toMatchObject({ kind: 'live' });
    expect(judgeLock(record, 0, { ...context, isProcessAlive: () => false })).toMatchObject({ kind: 'stale' });
    expect(judgeLock({ pid: 20, host: 'other' }, 0, { ...context, isProcessAlive: () => false })).toEqual({ kind: 'unknown' });
    expect(judgeLock({ pid: 20, host: 'other' }, 20_000, context)).toMatchObject({ kind: 'stale' });
  });

  it('falls back on the heartbeat without a pid check or a readable lock', () => {
    expect(judgeLock({ pid: 20, host: 'h' }, 1_000, context)).toEqual({ kind: 'unknown' });
    expect(judgeLock(undefined, 1_000, context)).toEqual({ kind: 'unknown' });
    expect(judgeLock(undefined, 16_000, context)).toMatchObject({ kind: 'stale' });
  });
});
