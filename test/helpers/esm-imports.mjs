/**
 * `node --import ./test/helpers/esm-imports.mjs ...`: notes every `import` the process resolves
 * as an ES module import (a `module.register` resolve hook: `require()` does not pass through it),
 * and on SIGUSR2 writes them, one a line (`<importing file URL> <specifier>`), to the file named by
 * `ESM_IMPORTS_FILE`.
 *
 * Used by test/integration/agent/embedded-imports.test.ts: Node reads the source of a CommonJS
 * package that an ES module imports (and of every package it re-exports) to list its export names,
 * and keeps that text for the process's life.
 */
import { writeFileSync } from 'node:fs';
import { register } from 'node:module';
import { MessageChannel } from 'node:worker_threads';

const output = process.env.ESM_IMPORTS_FILE;
if (!output) throw new Error('esm-imports.mjs needs ESM_IMPORTS_FILE');

const seen = [];
const { port1, port2 } = new MessageChannel();
port1.on('message', (line) => seen.push(line));
port1.unref();
register('./esm-imports-hooks.mjs', import.meta.url, { data: { port: port2 }, transferList: [port2] });

process.on('SIGUSR2', () => {
  writeFileSync(output, seen.join('\n') + '\n');
});
