import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packPackage } from '../../scripts/pack.js';

/**
 * The globalSetup of `npm run check` (vitest.check.config.ts): packs the built package once, before
 * any file runs, and names the tarball in `LISTING_AGENT_PACKED`, which every file that needs it
 * reads (test/runtimes/packed.ts; the publint and attw check). A tarball already named there (the
 * runtime matrix packs once for every runtime) is used as it is. The tarball is removed at the end.
 */
export default async function setup(): Promise<() => Promise<void>> {
  if (process.env.LISTING_AGENT_PACKED) return async () => {};
  const folder = await mkdtemp(join(tmpdir(), 'listing-agent-packed-'));
  process.env.LISTING_AGENT_PACKED = await packPackage(join(import.meta.dirname, '..', '..'), folder);
  return async () => {
    delete process.env.LISTING_AGENT_PACKED;
    await rm(folder, { recursive: true, force: true });
  };
}
