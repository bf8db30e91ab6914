import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The CommonJS side of the package, as `npm run build` writes it (scripts/build-cjs.mjs): every
 * entry of `exports` has an `import` and a `require` condition whose files exist, the `.cjs`
 * entries load the ES module build, and the `.d.cts` copies differ from the `.d.ts` only in their
 * relative specifiers. The packed package itself is tried in test/runtimes/. Needs dist/.
 */

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const read = (path: string) => readFileSync(join(REPO, path), 'utf8');
const manifest = JSON.parse(read('package.json')) as { exports: Record<string, unknown>; main: string; types: string; typesVersions: Record<string, Record<string, string[]>> };

interface DualEntry {
  import: { types: string; default: string };
  require: { types: string; default: string };
}

const declarations = (folder: string) =>
  readdirSync(join(REPO, folder), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.d.ts') && !file.startsWith('cjs/'))
    .sort();

describe('the CommonJS side of the package', () => {
  it('gives every entry of exports (but package.json) both conditions, built in dist/, and node10 the same files', () => {
    const entries = Object.entries(manifest.exports).filter(([subpath]) => subpath !== './package.json') as Array<[string, DualEntry]>;
    expect(entries.length).toBe(11);
    for (const [subpath, entry] of entries) {
      for (const file of [entry.import.types, entry.import.default, entry.require.types, entry.require.default]) expect(existsSync(join(REPO, file)), file).toBe(true);
      expect(entry.require.default).toBe(entry.import.default.replace('./dist/', './dist/cjs/').replace(/\.js$/, '.cjs'));
      expect(read(entry.require.default)).toContain(`module.exports = require('`);
      if (subpath !== '.') expect(manifest.typesVersions['*']![subpath.slice(2)]).toEqual([entry.require.types]);
    }
    expect(read('dist/cjs/public/client.cjs')).toContain("module.exports = require('../../public/client.js');");
    expect(manifest.main).toBe('./dist/cjs/index.cjs');
    expect(manifest.types).toBe('./dist/cjs/index.d.cts');
  });

  it('copies every declaration as .d.cts with relative .js specifiers made .cjs, package names and text kept', () => {
    const esm = declarations('dist');
    expect(esm.length).toBeGreaterThan(100);
    for (const file of esm) {
      const original = read(`dist/${file}`);
      const copy = read(`dist/cjs/${file.replace(/\.d\.ts$/, '.d.cts')}`);
      expect(copy, file).not.toMatch(/(['"])\.{1,2}\/[^'"\n]*\.js\1/);
      expect(copy, file).not.toContain('sourceMappingURL');
      // Undo the rewrite: the rest is the same text.
      expect(copy.replace(/(['"])(\.{1,2}\/[^'"\n]*?)\.cjs\1/g, '$1$2.js$1'), file).toBe(original.replace(/^\/\/# sourceMappingURL=.*\n?/m, ''));
    }
    expect(read('dist/cjs/index.d.cts')).toContain("from './agent/agent.cjs'");
    expect(read('dist/cjs/agent/agent.d.cts')).toContain("import type { Registry } from 'prom-client';");
  });
});
