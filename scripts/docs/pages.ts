/**
 * Which pages have generated blocks, and what fills them. `npm run docs` writes them
 * (scripts/generate-docs.ts); test/docs/generated.test.ts fails while a committed page differs.
 */
import { readFile } from 'node:fs/promises';
import { renderLayerGraph } from './architecture.js';
import { fillBlocks } from './blocks.js';
import { renderCliHelp } from './cli.js';
import { renderConfigKeys, renderSecretPaths } from './configuration.js';
import { ROOT } from './root.js';

export { ROOT } from './root.js';

/** Each page (relative to the root) and the generators of its blocks, by block name. */
export const GENERATED_PAGES: Readonly<Record<string, Readonly<Record<string, () => string | Promise<string>>>>> = {
  'docs/configuration.md': { 'config-keys': renderConfigKeys },
  'docs/cli.md': { 'cli-help': renderCliHelp },
  'docs/security.md': { 'secret-paths': renderSecretPaths },
  'docs/architecture.md': { 'layer-graph': renderLayerGraph },
};

/** Each generated page as committed and as `npm run docs` would write it. */
export async function renderPages(): Promise<{ file: string; committed: string; expected: string }[]> {
  const out = [];
  for (const [file, generators] of Object.entries(GENERATED_PAGES)) {
    const committed = await readFile(`${ROOT}${file}`, 'utf8');
    const blocks: Record<string, string> = {};
    for (const [name, generate] of Object.entries(generators)) blocks[name] = await generate();
    out.push({ file, committed, expected: fillBlocks(file, committed, blocks) });
  }
  return out;
}
