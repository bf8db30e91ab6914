/**
 * `node --import ./test/helpers/module-list.mjs ...`: notes every module the process loads, and on
 * SIGUSR2 writes their paths (one a line) to the file named by `MODULE_LIST_FILE`.
 *
 * Through the inspector (an in-process `Debugger` session: V8 reports every script it compiles),
 * not module hooks: ES modules, CommonJS modules, and the ES modules that `require()` loads (the
 * agent loads what its configuration needs that way: src/agent/lazy.ts), whose imports no
 * `module.register` hook sees on Node 20 and `require.cache` does not list.
 *
 * Used by test/integration/cli/idle-modules.test.ts (issues 20 and 25: the daemon and an embedded
 * agent load nothing they are not configured for).
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { fileURLToPath } from 'node:url';

const output = process.env.MODULE_LIST_FILE;
if (!output) throw new Error('module-list.mjs needs MODULE_LIST_FILE');

const seen = new Set();
const session = new Session();
session.connect();
session.on('Debugger.scriptParsed', ({ params }) => {
  if (params.url.startsWith('file:')) seen.add(fileURLToPath(params.url));
  else if (params.url.startsWith('/')) seen.add(params.url);
});
// Reports the scripts compiled so far, then each one as it is.
session.post('Debugger.enable');

process.on('SIGUSR2', () => {
  writeFileSync(output, [...seen].sort().join('\n') + '\n');
});
