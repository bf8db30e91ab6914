/**
 * The layer graph of docs/architecture.md: dependency-cruiser reads the imports of src/ (one cruise,
 * scripts/cruise-src.ts, that `npm run check` also judges the layers by), and this
 * draws them as Mermaid, one box per layer of scripts/layers.cjs and one node per folder, with an
 * arrow for each folder that imports another. The entries (cli, demo, the package entries) and the
 * composition root (agent, doctor) import most of the tree: their arrows are drawn once each, to
 * the layer below them; from the capabilities down, every folder's arrows are drawn.
 */
import { createRequire } from 'node:module';
import type { ICruiseResult } from 'dependency-cruiser';
import { cruiseSrc } from '../cruise-src.js';

interface Layer {
  name: string;
  path: string;
  says: string;
}

const require = createRequire(import.meta.url);
const { LAYERS, EMULATOR, TESTING } = require('../layers.cjs') as { LAYERS: Layer[]; EMULATOR: Layer; TESTING: Layer };

/** `src/votes/pipeline.ts` -> `votes`; `src/errors.ts` -> `errors.ts`. */
function folderOf(path: string): string {
  const [, first] = path.split('/');
  return first ?? path;
}

function layerOf(path: string): Layer | undefined {
  return [...LAYERS, EMULATOR, TESTING].find((layer) => new RegExp(layer.path).test(path));
}

/** Node IDs Mermaid accepts: `errors.ts` -> `errors_ts`. */
const id = (folder: string) => folder.replace(/[^a-zA-Z0-9]/g, '_');

/** The page and the generated block the layer graph fills. */
export const LAYER_GRAPH = { page: 'docs/architecture.md', block: 'layer-graph' } as const;

/** The Mermaid flowchart of src/'s folders by layer (the generated block `layer-graph`), from a cruise of src/. */
export function layerGraph(output: ICruiseResult): string {
  const folders = new Map<string, Layer>();
  const edges = new Set<string>();
  for (const module of output.modules) {
    const layer = layerOf(module.source);
    if (layer === undefined) continue;
    const from = folderOf(module.source);
    folders.set(from, layer);
    if (layer.name === 'entry' || layer.name === 'composition') continue;
    for (const dependency of module.dependencies) {
      const to = folderOf(dependency.resolved);
      if (to !== from && dependency.resolved.startsWith('src/')) edges.add(`${id(from)} --> ${id(to)}`);
    }
  }
  const lines = ['```mermaid', 'flowchart TB'];
  for (const layer of [...LAYERS, EMULATOR, TESTING]) {
    const members = [...folders].filter(([, l]) => l === layer).map(([folder]) => folder).sort();
    lines.push(`  subgraph layer_${layer.name}["${layer.name}: ${layer.says}"]`);
    for (const folder of members) lines.push(`    ${id(folder)}["${folder}"]`);
    lines.push('  end');
  }
  lines.push('  layer_entry --> layer_composition', '  layer_composition --> layer_capability');
  lines.push(...[...edges].sort().map((edge) => `  ${edge}`));
  lines.push('```');
  return lines.join('\n');
}

/** {@link layerGraph} of a fresh cruise of src/ (`npm run docs`). */
export async function renderLayerGraph(): Promise<string> {
  return layerGraph(await cruiseSrc());
}
