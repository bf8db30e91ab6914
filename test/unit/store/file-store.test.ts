import { chmod, cp, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { StoreError } from '../../../src/store/errors.js';
import { createFileStore, type FileStore, type FileStoreOptions } from '../../../src/store/file.js';
import { errno, removeTempDirs, shimFs, tempDir } from './helpers.js';
import { describeStoreContract } from './store-contract.js';

const opened: FileStore[] = [];

/** A file store that the test's cleanup closes (its lock removed) even when the test fails. */
function fileStore(options: FileStoreOptions): FileStore {
  const store = createFileStore(options);
  opened.push(store);
  return store;
}

afterEach(async () => {
  await Promise.all(opened.splice(0).map((store) => store.close().catch(() => undefined)));
  await removeTempDirs();
});

const readState = async (dir: string) => JSON.parse(await readFile(join(dir, 'state.json'), 'utf8')) as { version: number; data: Record<string, unknown> };

describeStoreContract('file store', async () => ({ store: fileStore({ directory: await tempDir(), flushDelayMs: 10 }) }));

describe('file store: persistence', () => {
  it('keeps the state across close and open, in a new instance', async () => {
    const dir = await tempDir();
    const first = fileStore({ directory: join(dir, 'nested', 'state') });
    await first.open();
    await first.set('votes:cursor', 'abc');
    await first.set('agent:lastRun', { at: 1 }, { durable: true });
    await first.delete('agent:lastRun');
    await first.close();

    const second = fileStore({ directory: join(dir, 'nested', 'state') });
    await second.open();
    expect(await second.get('votes:cursor')).toBe('abc');
    expect(await second.get('agent:lastRun')).toBeUndefined();
    expect(second.warnings()).toEqual([]);
    expect(second.describe()).toBe(`file ${join(dir, 'nested', 'state', 'state.json')}`);
  });

  it('has the durable write on disk when set() resolves', async () => {
    const dir = await tempDir();
    const store = fileStore({ directory: dir, flushDelayMs: 60_000 });
    await store.open();
    await store.set('votes:pending:1', { user: '1' }, { durable: true });
    expect(await readState(dir)).toEqual({ version: 1, data: { 'votes:pending:1': { user: '1' } } });
  });

  it('writes non-durable changes within flushDelayMs, and at flush()', async () => {
    const dir = await tempDir();
    const store = fileStore({ directory: dir, flushDelayMs: 20 });
    await store.open();
    await store.set('batched', 1);
    expect(store.stats().pending).toBe(true);
    await expect.poll(async () => (await readState(dir).catch(() => undefined))?.data, { timeout: 2_000, interval: 10 }).toEqual({ batched: 1 });
    // The file is visible once renamed; the write is counted after the directory's fsync that follows.
    await expect.poll(() => store.stats(), { timeout: 2_000, interval: 10 }).toMatchObject({ writes: 1, pending: false });

    const slow = fileStore({ directory: await tempDir(), flushDelayMs: 60_000 });
    await slow.open();
    await slow.set('x', 1);
    await slow.flush();
    expect(slow.stats()).toMatchObject({ writes: 1, pending: false });
  });

  it('survives a crash: a copy of the directory taken without close() has every durable write', async () => {
    const dir = await tempDir();
    const crashed = fileStore({ directory: dir, flushDelayMs: 60_000, owner: { pid: 111, host: 'box' } });
    await crashed.open();
    await crashed.set('votes:pending:a', 1, { durable: true });
    await crashed.set('votes:cursor', 'c1');
    await crashed.set('votes:pending:b', 2, { durable: true });

    const copy = await tempDir();
    await cp(dir, copy, { recursive: true });
    const restarted = fileStore({ directory: copy, owner: { pid: 222, host: 'box' }, isProcessAlive: () => false });
    await restarted.open();
    expect(await restarted.get('votes:pending:a')).toBe(1);
    expect(await restarted.get('votes:pending:b')).toBe(2);
    expect(await restarted.get('votes:cursor')).toBe('c1'); // carried by the durable write after it
    expect(restarted.warnings()).toEqual([expect.stringMatching(/took over .*state\.lock from pid 111 on host box .*no longer runs/)]);
  });

  it('removes temp files a dead writer left behind', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'state.json.tmp-deadbeef'), '{"version":1,"data":{"half');
    const store = fileStore({ directory: dir });
    await store.open();
    expect((await readdir(dir)).sort()).toEqual(['state.lock']);
  });
});

describe('file store: failed writes', () => {
  it('never replaces a good file with a partial one, rejects with a StoreError and retries', async () => {
    const dir = await tempDir();
    const shim = shimFs();
    const store = fileStore({ directory: dir, fs: shim.fs, flushDelayMs: 60_000 });
    await store.open();
    await store.set('good', 1, { durable: true });

    shim.failWrites = errno('ENOSPC', 'no space left on device, write');
    const failed = store.set('new', 2, { durable: true });
    await expect(failed).rejects.toThrow(StoreError);
    await expect(failed).rejects.toThrow(`cannot write ${join(dir, 'state.json')}: no space left on device`);
    expect(await readState(dir)).toEqual({ version: 1, data: { good: 1 } });
    expect((await readdir(dir)).filter((name) => name.includes('.tmp-'))).toEqual([]);
    expect(await store.get('new')).toBe(2); // kept in memory
    expect(store.stats()).toMatchObject({ failedWrites: 1, pending: true, lastError: expect.stringContaining('no space') });

    shim.failWrites = undefined;
    await store.flush();
    expect(await readState(dir)).toEqual({ version: 1, data: { good: 1, new: 2 } });
    expect(store.stats()).toMatchObject({ pending: false, lastError: undefined });
  });

  it('retries a failed timed write on its own', async () => {
    const dir = await tempDir();
    const shim = shimFs();
    const store = fileStore({ directory: dir, fs: shim.fs, flushDelayMs: 15 });
    await store.open();
    shim.failWrites = errno('EIO', 'i/o error, write');
    await store.set('later', true);
    await expect.poll(() => store.stats().failedWrites, { timeout: 2_000, interval: 5 }).toBeGreaterThan(0);
    shim.failWrites = undefined;
    await expect.poll(async () => (await readState(dir).catch(() => undefined))?.data, { timeout: 2_000, interval: 10 }).toEqual({ later: true });
  });

  it('rejects writes during and after close, and close() flushes what was pending', async () => {
    const dir = await tempDir();
    const store = fileStore({ directory: dir, flushDelayMs: 60_000 });
    await store.open();
    await store.set('pending', 'yes');
    const closing = store.close();
    await expect(store.set('late', 1)).rejects.toThrow(/closed/);
    await closing;
    expect(await readState(dir)).toEqual({ version: 1, data: { pending: 'yes' } });
    expect(await store.get('pending')).toBe('yes'); // reads still answer from memory
  });
});

describe('file store: group commit', () => {
  it('writes 100 concurrent durable sets in a handful of file writes', async () => {
    const shim = shimFs();
    const dir = await tempDir();
    const store = fileStore({ directory: dir, fs: shim.fs });
    await store.open();
    await Promise.all(Array.from({ length: 100 }, (_, i) => store.set(`votes:pending:${i}`, i, { durable: true })));
    expect(store.stats().writes).toBeLessThanOrEqual(3);
    expect(shim.datasyncs).toBe(store.stats().writes);
    expect(Object.keys((await readState(dir)).data)).toHaveLength(100);
  });

  it('coalesces durable writes that arrive while one is in flight into the next single write', async () => {
    const shim = shimFs();
    const store = fileStore({ directory: await tempDir(), fs: shim.fs });
    await store.open();
    let open!: () => void;
    shim.gate = new Promise<void>((resolve) => (open = resolve));
    const first = store.set('first', 0, { durable: true });
    await expect.poll(() => shim.datasyncs).toBe(1); // the first write is now waiting on the disk
    const rest = Array.from({ length: 40 }, (_, i) => store.set(`k${i}`, i, { durable: true }));
    shim.gate = undefined;
    open();
    await Promise.all([first, ...rest]);
    expect(store.stats().writes).toBe(2);
    expect(shim.writesStarted).toBe(2);
  });
});

describe('file store: a directory it cannot use', () => {
  const fix = 'set state.directory (LISTING_AGENT_STATE_DIRECTORY)';

  it('names the path and the fix when a parent of the directory is a file (ENOTDIR)', async () => {
    const file = join(await tempDir(), 'a-file');
    await writeFile(file, 'x');
    const error = await fileStore({ directory: join(file, 'state') }).open().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect(error).toMatchObject({ code: 'store', path: join(file, 'state') });
    expect((error as Error).message).toBe(`cannot create the state directory ${join(file, 'state')}: part of the path is a file, not a directory — ${fix} to a directory`);
  });

  it('says so when the directory is a file', async () => {
    const file = join(await tempDir(), 'state');
    await writeFile(file, 'x');
    await expect(fileStore({ directory: file }).open()).rejects.toThrow(`the state directory ${file} is a file, not a directory — ${fix} to a directory, or move that file`);
  });

  it('says "permission denied" when nothing can be written there (injected EACCES)', async () => {
    const dir = await tempDir();
    const shim = shimFs();
    shim.failOpens = errno('EACCES', 'permission denied, open');
    await expect(fileStore({ directory: dir, fs: shim.fs }).open()).rejects.toThrow(
      `cannot write the state directory ${dir}: permission denied — ${fix} to a writable directory`,
    );
  });

  it('refuses a read-only directory (chmod 0500)', async () => {
    const dir = await tempDir();
    await chmod(dir, 0o500);
    try {
      // root ignores mode bits, so chmod proves nothing there: the injected EACCES test above covers it.
      const writable = await writeFile(join(dir, 'probe'), '').then(() => true, () => false);
      if (writable) return;
      await expect(fileStore({ directory: dir }).open()).rejects.toThrow(`cannot write the state directory ${dir}: permission denied`);
    } finally {
      await chmod(dir, 0o700);
    }
  });
});

describe('file store: a corrupt state file', () => {
  it('is moved aside, reported, and the store starts empty', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'state.json'), '{"version":1,"data":{"votes:cur');
    const store = fileStore({ directory: dir, now: () => Date.parse('2024-05-01T12:00:00.000Z') });
    await store.open();
    const movedTo = join(dir, 'state.json.corrupt-2024-05-01T12-00-00.000Z');
    expect(store.recovered).toMatchObject({ movedTo, restoredFrom: 'empty', reason: expect.stringContaining('not JSON') });
    expect(await readFile(movedTo, 'utf8')).toBe('{"version":1,"data":{"votes:cur');
    expect(await readState(dir)).toEqual({ version: 1, data: {} });
    expect(store.warnings()).toEqual([expect.stringContaining(`moved it to ${movedTo} and started with an empty state`)]);
    expect(store.describe()).toContain('recovered');
    expect(await store.keys('')).toEqual([]);
  });

  it('is replaced by the previous good generation when there is one', async () => {
    const dir = await tempDir();
    const writer = fileStore({ directory: dir });
    await writer.open();
    await writer.set('votes:cursor', 'old', { durable: true });
    await writer.set('votes:cursor', 'new', { durable: true });
    await writer.close();
    await writeFile(join(dir, 'state.json'), '{"version":1,"data":[]}');

    const store = fileStore({ directory: dir });
    await store.open();
    expect(store.recovered).toMatchObject({ restoredFrom: 'previous', reason: '"data" is not an object' });
    expect(await store.get('votes:cursor')).toBe('old');
    expect(await readState(dir)).toEqual({ version: 1, data: { 'votes:cursor': 'old' } });
  });

  it('is left alone when a newer version wrote it', async () => {
    const dir = await tempDir();
    const newer = '{"version":2,"data":{},"extra":true}';
    await writeFile(join(dir, 'state.json'), newer);
    await expect(fileStore({ directory: dir }).open()).rejects.toThrow(/written by a newer listing-agent/);
    expect(await readFile(join(dir, 'state.json'), 'utf8')).toBe(newer);
    expect((await readdir(dir)).sort()).toEqual(['state.json']); // and the lock was released
  });
});
