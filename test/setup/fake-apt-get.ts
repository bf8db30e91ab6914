import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Writes an executable file. */
export function writeExecutable(path: string, text: string): string {
  writeFileSync(path, text);
  chmodSync(path, 0o755);
  return path;
}

/**
 * A fake `apt-get` in `bin` (a Node script, so it needs nothing else on PATH) that logs each call
 * with its DEBIAN_FRONTEND to `log`; its `install` exits `installExit`, or when 0 creates the
 * executable `creates` (the package's program) if given. Tests put it first on PATH so nothing is
 * ever installed.
 */
export function fakeAptGet(bin: string, log: string, options: { installExit: number; creates?: string }): { calls(): string[] } {
  const creates = options.creates
    ? `fs.writeFileSync(${JSON.stringify(options.creates)}, '#!/bin/sh\\n'); fs.chmodSync(${JSON.stringify(options.creates)}, 0o755);`
    : '';
  writeExecutable(
    join(bin, 'apt-get'),
    `#!${process.execPath}
const fs = require('node:fs');
const args = process.argv.slice(2);
fs.appendFileSync(${JSON.stringify(log)}, args.join(' ') + ' DEBIAN_FRONTEND=' + process.env.DEBIAN_FRONTEND + '\\n');
if (args[0] === 'install') {
  if (${options.installExit} !== 0) {
    console.error('E: Unable to locate package ' + args.at(-1));
    process.exit(${options.installExit});
  }
  ${creates}
}
`,
  );
  return { calls: () => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : []) };
}
