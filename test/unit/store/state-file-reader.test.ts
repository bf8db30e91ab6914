import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createFileStore } from '../../../src/store/file.js';
import { createStateFileReader } from '../../../src/store/state-file-reader.js';

const made: string[] = [];
afterEach(async () => {
  for (const dir of made.splice(0)) await rm(dir, { recursive: true, force: true });
});
async function directory(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'state-reader-'));
  made.push(dir);
  return dir;
}

describe('createStateFileReader', () => {
  it('reads what the file store wrote last, while the store still holds the lock', async () => {
    const dir = await directory();
    await using store = createFileStore({ directory: dir });
    await store.open();
    await store.set('commands:lastSync', { hash: 'abc' }, { durable: true });
    const reader = createStateFileReader(dir);
    expect(await reader.get('commands:lastSync')).toEqual({ hash: 'abc' });
    expect(await reader.get('missing')).toBeUndefined();
  });

  it('reads no value from a directory without a state file, or with a corrupt one', async () => {
    const dir = await directory();
    expect(await createStateFileReader(dir).get('any')).toBeUndefined();
    await writeFile(join(dir, 'state.json'), '{ not json');
    expect(await createStateFileReader(dir).get('any')).toBeUndefined();
  });
});
