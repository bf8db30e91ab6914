/**
 * `node --import ./test/helpers/module-list.mjs ...`: notes every module the process loads, and on
 * SIGUSR2 writes their paths (one a line) to the file named by `MODULE_LIST_FILE`:
 *
 * - ES modules through a `load` hook (`module.register`; on Node 20 the hooks run on a thread of
 *   their own and post each URL back here);
 * - CommonJS modules from `require.cache` (a `require` inside CommonJS does not go through the
 *   hooks on Node 20), which is where pino, undici, prom-client, @redis/client and discord.js land.
 *
 * Used by test/integration/cli/idle-modules.test.ts (issue 20: the daemon loads no capability it
 * is not configured for).
 */
import { writeFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import { fileURLToPath } from 'node:url';
import { MessageChannel } from 'node:worker_threads';

const output = process.env.MODULE_LIST_FILE;
if (!output) throw new Error('module-list.mjs needs MODULE_LIST_FILE');

const seen = new Set();
const { port1, port2 } = new MessageChannel();
port1.on('message', (url) => seen.add(url));
port1.unref();
register('./module-list-hooks.mjs', { parentURL: import.meta.url, data: { port: port2 }, transferList: [port2] });

const require = createRequire(import.meta.url);
process.on('SIGUSR2', () => {
  const esm = [...seen].filter((url) => url.startsWith('file:')).map((url) => fileURLToPath(url));
  const cjs = Object.keys(require.cache);
  writeFileSync(output, [...new Set([...esm, ...cjs])].sort().join('\n') + '\n');
});
