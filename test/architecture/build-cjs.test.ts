import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { cjsEntryText, declarationAsCjs, dualEntries } from '../../scripts/build-cjs.js';

/**
 * The CommonJS side of the package (scripts/build-cjs.ts, run by `npm run build`): every entry of
 * `exports` has a `require` condition whose files were built, and the rewriting of declarations
 * touches relative specifiers only. The packed package itself is tried in test/runtimes/.
 */

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const manifest = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { exports: Record<string, unknown>; main: string; types: string };

describe('the CommonJS side of the package', () => {
  it('gives every entry of exports (but package.json) an import and a require condition, built in dist/', () => {
    const entries = dualEntries(manifest);
    expect(entries.map(([subpath]) => subpath)).toEqual(Object.keys(manifest.exports).filter((subpath) => subpath !== './package.json'));
    for (const [, entry] of entries) {
      for (const file of [entry.import.types, entry.import.default, entry.require.types, entry.require.default]) expect(existsSync(join(REPO, file)), file).toBe(true);
    }
    expect(manifest.main).toBe((manifest.exports['.'] as { require: { default: string } }).require.default);
  });

  it("writes an entry that require()s the ES module build, and rewrites only relative '.js' specifiers", () => {
    expect(cjsEntryText('dist/cjs/public/client.cjs', 'dist/public/client.js')).toContain("module.exports = require('../../public/client.js');");
    expect(cjsEntryText('dist/cjs/index.cjs', 'dist/index.js')).toContain("module.exports = require('../index.js');");
    const declaration = [
      "import type { Client } from 'discord.js';",
      "export { createListingAgent } from './agent/agent.js';",
      'export type { Vote } from "../votes/types.js";',
      "export declare const x: typeof import('./x.js').y;",
      '//# sourceMappingURL=index.d.ts.map',
    ].join('\n');
    expect(declarationAsCjs(declaration)).toBe(
      ["import type { Client } from 'discord.js';", "export { createListingAgent } from './agent/agent.cjs';", 'export type { Vote } from "../votes/types.cjs";', "export declare const x: typeof import('./x.cjs').y;", ''].join('\n'),
    );
  });
});
