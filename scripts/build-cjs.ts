/**
 * The second half of `npm run build`, after tsc: what lets CommonJS `require('listing-agent')`
 * work from the one ES module build (docs/development.md, "One build, two module systems").
 *
 * - For each entry of the `exports` map, its `require` target: a two-line `.cjs` file that loads
 *   the ES module build with Node's `require()` of ES modules (20.19+, 22.12+). The module state
 *   exists once per process, whichever way a bot loads the package: an error thrown by one is an
 *   `instanceof` the class the other exports. (Being in node_modules, this `require()` prints no
 *   ExperimentalWarning on 22.12, where a bot's own `require()` of an ES module still did.)
 * - `dist/cjs/**.d.cts`: the declarations again, as CommonJS ones (relative specifiers `.js` ->
 *   `.cjs`), so that TypeScript with `module` node16/nodenext in a CommonJS project types a
 *   `require` without error TS1479 (a `.d.cts` that re-exported the ESM `.d.ts` would have it).
 * - `dist/cli/main.js` made executable (tsc writes 0644; `npx listing-agent` needs the bit).
 *
 *   node --import ./test/helpers/ts-register.mjs scripts/build-cjs.ts
 */
import { chmod, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join, posix, relative, resolve } from 'node:path';

/** One entry of the `exports` map with both conditions. */
interface DualEntry {
  import: { types: string; default: string };
  require: { types: string; default: string };
}

/** The folder of the CommonJS side, inside dist/. */
export const CJS_DIR = 'dist/cjs';

/** A relative specifier from `fromFile` to `toFile` (both package paths), starting with `./` or `../`. */
function specifier(fromFile: string, toFile: string): string {
  const path = posix.relative(posix.dirname(fromFile), toFile);
  return path.startsWith('.') ? path : `./${path}`;
}

/** The text of an entry's `.cjs` file, loading `esmFile` (both package paths). */
export function cjsEntryText(cjsFile: string, esmFile: string): string {
  return `'use strict';\n// require('listing-agent...') loads the ES module build: one copy of the package per process.\nmodule.exports = require('${specifier(cjsFile, esmFile)}');\n`;
}

/** A `.d.ts` text as a `.d.cts` one: relative `.js` specifiers become `.cjs`, no source map. */
export function declarationAsCjs(text: string): string {
  return text.replace(/(['"])(\.{1,2}\/[^'"\n]*?)\.js\1/g, '$1$2.cjs$1').replace(/^\/\/# sourceMappingURL=.*\n?/m, '');
}

async function declarationFiles(folder: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(folder, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name.endsWith('.d.ts')) found.push(join(entry.parentPath, entry.name));
  }
  return found;
}

/** The entries of `exports` that have an `import` and a `require` condition. */
export function dualEntries(manifest: { exports: Record<string, unknown> }): Array<[string, DualEntry]> {
  return Object.entries(manifest.exports).filter((pair): pair is [string, DualEntry] => typeof pair[1] === 'object' && pair[1] !== null && 'require' in pair[1]);
}

/** Writes dist/cjs/ for the package at `root` (dist/ built by tsc) and marks the CLI executable. */
export async function buildCjs(root: string): Promise<{ entries: number; declarations: number }> {
  const manifest = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { exports: Record<string, unknown> };
  const dist = join(root, 'dist');
  const cjs = join(root, CJS_DIR);
  await rm(cjs, { recursive: true, force: true });
  const declarations = await declarationFiles(dist);
  for (const file of declarations) {
    const target = join(cjs, relative(dist, file)).replace(/\.d\.ts$/, '.d.cts');
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, declarationAsCjs(await readFile(file, 'utf8')));
  }
  const entries = dualEntries(manifest);
  for (const [subpath, entry] of entries) {
    const cjsFile = posix.normalize(entry.require.default);
    const esmFile = posix.normalize(entry.import.default);
    if (!cjsFile.startsWith(`${CJS_DIR}/`)) throw new Error(`exports["${subpath}"].require must point into ${CJS_DIR}/ (got ${entry.require.default})`);
    await mkdir(dirname(join(root, cjsFile)), { recursive: true });
    await writeFile(join(root, cjsFile), cjsEntryText(cjsFile, esmFile));
  }
  await chmod(join(dist, 'cli/main.js'), 0o755);
  return { entries: entries.length, declarations: declarations.length };
}

const invokedDirectly = process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(import.meta.dirname, 'build-cjs.ts');
if (invokedDirectly) await buildCjs(resolve(import.meta.dirname, '..'));
