/**
 * `npm pack` of the built package, the one way the checks pack it: `npm run check` packs once for
 * every file that needs the tarball (test/setup/packed-tarball.ts), the runtime matrix once for
 * every runtime (scripts/runtime-matrix.ts), `npm run lint:package` once for publint and attw.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Packs `root` into `folder` (scripts off: dist/ must be built); the tarball's path. */
export async function packPackage(root: string, folder: string): Promise<string> {
  if (!existsSync(join(root, 'dist', 'cjs', 'index.cjs'))) throw new Error('dist/ is not built: run npm run build first');
  await run('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', folder], { cwd: root });
  const tarball = (await readdir(folder)).find((name) => name.endsWith('.tgz'));
  if (!tarball) throw new Error(`npm pack wrote no tarball in ${folder}`);
  return join(folder, tarball);
}
