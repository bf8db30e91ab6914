import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ValidationError } from '../../../src/errors.js';
import { createFileTokenStore, createMemoryTokenStore, type OAuthTokens } from '../../../src/api/oauth/index.js';

const TOKENS: OAuthTokens = {
  accessToken: 'lat_access_secret',
  refreshToken: 'lrt_refresh_secret',
  expiresAt: 1_772_618_400_000,
  scopes: ['project.votes.read', 'user.identify'],
  project: { id: '100000000000000001', platform_id: '200000000000000002', name: 'Bot', platform: 'discord', type: 'bot' },
};

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'oauth-store-'));
  dirs.push(dir);
  return dir;
}

describe('createMemoryTokenStore', () => {
  it('round-trips copies', async () => {
    const store = createMemoryTokenStore();
    expect(await store.load()).toBeUndefined();
    const tokens = structuredClone(TOKENS);
    await store.save(tokens);
    tokens.scopes.push('user.projects.read');
    expect(await store.load()).toEqual(TOKENS);
  });
});

describe('createFileTokenStore', () => {
  it('loads nothing before the first save, then round-trips the tokens as JSON', async () => {
    const path = join(await tempDir(), 'tokens.json');
    const store = createFileTokenStore(path);
    expect(await store.load()).toBeUndefined();
    await store.save(TOKENS);
    expect(JSON.parse(await readFile(path, 'utf8'))).toEqual(TOKENS);
    expect(await createFileTokenStore(path).load()).toEqual(TOKENS);
    const { project: _project, ...withoutProject } = TOKENS;
    await store.save(withoutProject);
    expect(await store.load()).toEqual(withoutProject);
  });

  it('writes mode 0600 through a temporary file renamed over the target', async () => {
    const dir = await tempDir();
    const path = join(dir, 'tokens.json');
    await writeFile(path, '{"old": true}');
    await chmod(path, 0o644);
    const before = await stat(path);
    await createFileTokenStore(path).save(TOKENS);
    const after = await stat(path);
    expect(after.mode & 0o777).toBe(0o600);
    // A rename puts a new inode in place; an in-place rewrite would keep the old one (and its mode).
    expect(after.ino).not.toBe(before.ino);
    expect(await readdir(dir)).toEqual(['tokens.json']);
  });

  it('keeps saves in call order', async () => {
    const path = join(await tempDir(), 'tokens.json');
    const store = createFileTokenStore(path);
    await Promise.all(Array.from({ length: 5 }, (_, i) => store.save({ ...TOKENS, refreshToken: `lrt_${i}` })));
    expect((await store.load())?.refreshToken).toBe('lrt_4');
  });

  it('leaves the old file and no temporary file when a save fails', async () => {
    const dir = await tempDir();
    const path = join(dir, 'tokens.json');
    const store = createFileTokenStore(path);
    await store.save(TOKENS);
    // A directory in the target's place makes the rename fail after the temp file was written.
    const blocked = join(dir, 'blocked');
    await mkdir(blocked);
    await expect(createFileTokenStore(blocked).save(TOKENS)).rejects.toThrow();
    expect((await readdir(dir)).sort()).toEqual(['blocked', 'tokens.json']);
    expect(await store.load()).toEqual(TOKENS);
  });

  it('refuses a corrupt file without echoing its tokens', async () => {
    const path = join(await tempDir(), 'tokens.json');
    await writeFile(path, 'not json lrt_refresh_secret');
    const notJson = await createFileTokenStore(path).load().catch((error: unknown) => error as Error);
    expect(notJson).toBeInstanceOf(ValidationError);
    expect(String(notJson)).not.toContain('lrt_refresh_secret');
    await writeFile(path, JSON.stringify({ ...TOKENS, expiresAt: 'soon', scopes: ['lrt_refresh_secret'] }));
    const wrong = await createFileTokenStore(path).load().catch((error: unknown) => error as Error);
    expect(wrong).toBeInstanceOf(ValidationError);
    expect((wrong as ValidationError).issues.map((issue) => issue.path)).toEqual(['expiresAt', 'scopes[0]']);
    expect(String(wrong)).not.toContain('lrt_refresh_secret');
  });
});
