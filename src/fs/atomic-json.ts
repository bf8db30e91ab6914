import { randomBytes } from 'node:crypto';
import { open, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/**
 * Writes `value` as JSON to `path` so that a crash at any moment leaves either the old file or
 * the new one, never a torn one: a temporary file beside it (exactly `mode`, flushed to disk),
 * renamed over the target, then the directory synced so the rename itself survives a power cut
 * (where the platform allows it).
 */
export async function writeJsonAtomically(path: string, value: unknown, mode: number): Promise<void> {
  const temp = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(temp, 'wx', mode);
  try {
    // The umask may have taken bits away from `open`'s mode; make it exact.
    await handle.chmod(mode);
    await handle.writeFile(`${JSON.stringify(value, null, 2)}\n`, 'utf8');
    await handle.sync();
  } catch (error) {
    await handle.close();
    await unlink(temp).catch(() => undefined);
    throw error;
  }
  await handle.close();
  try {
    await rename(temp, path);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
  const directory = await open(dirname(path), 'r').catch(() => undefined);
  await directory?.sync().catch(() => undefined);
  await directory?.close();
}
