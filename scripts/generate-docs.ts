/**
 * `npm run docs`: rewrites the generated blocks of the docs pages (scripts/docs/pages.ts) from the
 * config schema and the CLI's help. Runs from the TypeScript sources (no build needed) through the
 * test loader: node --import ./test/helpers/ts-register.mjs scripts/generate-docs.ts
 */
import { writeFile } from 'node:fs/promises';
import { renderPages, ROOT } from './docs/pages.js';

for (const { file, committed, expected } of await renderPages()) {
  if (committed === expected) {
    console.log(`${file}: up to date`);
  } else {
    await writeFile(`${ROOT}${file}`, expected);
    console.log(`${file}: rewritten`);
  }
}
