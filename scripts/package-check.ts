/**
 * Checks the package as npm would publish it: `publint --strict` (the `exports` map, the files it
 * names, the fields) and `@arethetypeswrong/cli` on the packed tarball with its full default
 * profile: every subpath resolves to JavaScript and types under node10, node16 from CommonJS and
 * from ESM, and bundlers (the `require` side is dist/cjs/, written by scripts/build-cjs.mjs).
 * `npm run check` runs it on the tarball it packed once (test/architecture/public-surface.check.ts);
 * run alone (`npm run lint:package`, which builds first), it packs one itself.
 *
 *   node --import ./test/helpers/ts-register.mjs scripts/package-check.ts
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { packPackage } from './pack.js';

const run = promisify(execFile);

/** One tool's verdict: ok, or its output naming each problem. */
export interface PackageCheckResult {
  tool: 'publint' | 'attw';
  ok: boolean;
  output: string;
}

async function tool(root: string, bin: string, args: string[]): Promise<{ ok: boolean; output: string }> {
  try {
    const { stdout, stderr } = await run(join(root, 'node_modules/.bin', bin), args, { cwd: root, maxBuffer: 16 * 1024 * 1024 });
    return { ok: true, output: `${stdout}${stderr}` };
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string; message: string };
    return { ok: false, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` || failed.message };
  }
}

/** Runs both tools on `tarball`, a packed `root` (their binaries are `root`'s). */
export async function checkPackage(root: string, tarball: string): Promise<PackageCheckResult[]> {
  const publint = await tool(root, 'publint', ['--strict', tarball]);
  const attw = await tool(root, 'attw', [tarball, '--format', 'ascii']);
  return [
    { tool: 'publint', ...publint },
    { tool: 'attw', ...attw },
  ];
}

const invokedDirectly = process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(import.meta.dirname, 'package-check.ts');
if (invokedDirectly) {
  const root = resolve(import.meta.dirname, '..');
  const folder = await mkdtemp(join(tmpdir(), 'listing-agent-pack-'));
  try {
    const results = await checkPackage(root, await packPackage(root, folder));
    for (const result of results) console.log(`${result.tool}: ${result.ok ? 'ok' : 'FAILED'}\n${result.output.trim()}\n`);
    process.exitCode = results.every((result) => result.ok) ? 0 : 1;
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}
