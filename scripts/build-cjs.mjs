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
 * Plain JavaScript, so that the build needs nothing but Node (the Dockerfile's build stage copies
 * this file and no test helper). test/architecture/build-cjs.test.ts checks what it writes.
 *
 *   node scripts/build-cjs.mjs
 */
import { chmod, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join, posix, relative, resolve } from 'node:path';

/** @typedef {{ import: { types: string; default: string }; require: { types: string; default: string } }} DualEntry */

/** The folder of the CommonJS side, inside dist/. */
const CJS_DIR = 'dist/cjs';

/**
 * A relative specifier from `fromFile` to `toFile` (both package paths), starting with `./` or `../`.
 * @param {string} fromFile
 * @param {string} toFile
 */
function specifier(fromFile, toFile) {
  const path = posix.relative(posix.dirname(fromFile), toFile);
  return path.startsWith('.') ? path : `./${path}`;
}

/**
 * The text of an entry's `.cjs` file, loading `esmFile` (both package paths).
 * @param {string} cjsFile
 * @param {string} esmFile
 */
function cjsEntryText(cjsFile, esmFile) {
  return `'use strict';\n// require('listing-agent...') loads the ES module build: one copy of the package per process.\nmodule.exports = require('${specifier(cjsFile, esmFile)}');\n`;
}

/**
 * A `.d.ts` text as a `.d.cts` one: relative `.js` specifiers become `.cjs`, no source map.
 * @param {string} text
 */
function declarationAsCjs(text) {
  return text.replace(/(['"])(\.{1,2}\/[^'"\n]*?)\.js\1/g, '$1$2.cjs$1').replace(/^\/\/# sourceMappingURL=.*\n?/m, '');
}

/** @param {string} folder */
async function declarationFiles(folder) {
  /** @type {string[]} */
  const found = [];
  for (const entry of await readdir(folder, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name.endsWith('.d.ts')) found.push(join(entry.parentPath, entry.name));
  }
  return found;
}

/**
 * The entries of `exports` that have an `import` and a `require` condition.
 * @param {{ exports: Record<string, unknown> }} manifest
 * @returns {Array<[string, DualEntry]>}
 */
function dualEntries(manifest) {
  return /** @type {Array<[string, DualEntry]>} */ (Object.entries(manifest.exports).filter((pair) => typeof pair[1] === 'object' && pair[1] !== null && 'require' in pair[1]));
}

/**
 * Writes dist/cjs/ for the package at `root` (dist/ built by tsc) and marks the CLI executable.
 * @param {string} root
 */
async function buildCjs(root) {
  const manifest = JSON.parse(await readFile(join(root, 'package.json'), 'utf8'));
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
}

await buildCjs(resolve(import.meta.dirname, '..'));
