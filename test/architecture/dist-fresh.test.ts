import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

/*
 * dist/ is what npm packs ("files": ["dist", ...]). tsc only adds and overwrites, so a module
 * removed from src/ would live on in dist/ and ship in the package: `npm run build` empties dist/
 * first. npm test builds before it runs, so this checks the build that just ran.
 */

const ROOT = join(import.meta.dirname, '../..');

function filesUnder(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(folder, join(entry.parentPath, entry.name)));
}

describe('dist/', () => {
  it('holds a module for each source in src/ and nothing else (no leftover of a removed source)', () => {
    const sources = new Set(filesUnder(join(ROOT, 'src')).filter((file) => file.endsWith('.ts')).map((file) => file.slice(0, -'.ts'.length)));
    const esm = filesUnder(join(ROOT, 'dist')).filter((file) => file.endsWith('.js') && !file.startsWith('cjs/'));
    const cjs = filesUnder(join(ROOT, 'dist/cjs')).filter((file) => file.endsWith('.cjs'));
    const leftovers = [...esm.map((file) => file.slice(0, -'.js'.length)), ...cjs.map((file) => file.slice(0, -'.cjs'.length))].filter((module) => !sources.has(module));
    expect(leftovers, 'modules in dist/ without a source in src/: run `npm run build` (it empties dist/ first)').toEqual([]);
    expect(esm.length).toBe(sources.size);
  });
});
