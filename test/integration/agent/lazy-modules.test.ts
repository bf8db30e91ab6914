import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

/**
 * The modules an agent loads on first use (src/agent/lazy.ts, issue 25): vitest imports them all
 * first (test/setup/lazy-modules.ts), so the path the built package takes, `require()` of each
 * ES module, is checked here, in a plain Node process on dist/.
 */

const LAZY_SOURCE = fileURLToPath(new URL('../../../src/agent/lazy.ts', import.meta.url));
const LAZY_BUILT = new URL('../../../dist/agent/lazy.js', import.meta.url).href;

describe('the lazily loaded modules', () => {
  it('name one module three times each: the type, the specifier require() loads, and the import vitest preloads', () => {
    const text = readFileSync(LAZY_SOURCE, 'utf8');
    // On one line or wrapped over several (the line width), with or without a trailing comma.
    const declared = [...text.matchAll(/lazyModule<typeof import\('([^']+)'\)>\(\s*'([^']+)',\s*\(\) => import\('([^']+)'\),?\s*\)/g)];
    expect(declared.length).toBe([...text.matchAll(/= lazyModule</g)].length);
    expect(declared.length).toBeGreaterThanOrEqual(9);
    for (const [, type, specifier, preload] of declared) expect([specifier, preload], type).toEqual([type, type]);
  });

  it('load with require() in the built package, each the same module as its import()', async () => {
    const script = `
      const lazy = await import(${JSON.stringify(LAZY_BUILT)});
      const entries = Object.entries(lazy).filter(([, value]) => typeof value?.get === 'function');
      const required = entries.map(([name, module]) => [name, Object.keys(module.get()).length > 0]);
      // Imports each again: throws when an import() gives another module than require() did.
      await lazy.preloadLazyModules();
      console.log(JSON.stringify(Object.fromEntries(required)));`;
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script]);
    expect(stderr).toBe('');
    const same = JSON.parse(stdout) as Record<string, boolean>;
    expect(Object.keys(same).length).toBeGreaterThanOrEqual(9);
    expect(Object.entries(same).filter(([, ok]) => !ok)).toEqual([]);
  });
});
