/**
 * Which pages have generated blocks, and what fills them. `npm run docs` writes them
 * (scripts/generate-docs.ts); test/docs/generated.test.ts fails while a committed page differs,
 * and test/architecture/layers.check.ts (`npm run check`) for the layer graph, which it draws from
 * the cruise it judges the layers by.
 */
import { readFile } from 'node:fs/promises';
import { LAYER_GRAPH, renderLayerGraph } from './architecture.js';
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
  [LAYER_GRAPH.page]: { [LAYER_GRAPH.block]: renderLayerGraph },
};

/** Each generated page (or those of `files`) as committed and as `npm run docs` would write it. */
export async function renderPages(files: readonly string[] = Object.keys(GENERATED_PAGES)): Promise<{ file: string; committed: string; expected: string }[]> {
  const out = [];
  for (const [file, generators] of Object.entries(GENERATED_PAGES).filter(([page]) => files.includes(page))) {
    const committed = await readFile(`${ROOT}${file}`, 'utf8');
    const blocks: Record<string, string> = {};
    for (const [name, generate] of Object.entries(generators)) blocks[name] = await generate();
    out.push({ file, committed, expected: fillBlocks(file, committed, blocks) });
  }
  return out;
}
