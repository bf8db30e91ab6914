import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

/**
 * Nothing unused (issue 18): knip (knip.json) finds no unused file, export, type or dependency in
 * src/, scripts/, test/ and bench/. An export only a test needs counts as used; an export nobody
 * imports is made internal or removed. `npm run lint:unused` prints the same for a person.
 */

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const run = promisify(execFile);

describe('unused code', () => {
  it('knip finds no unused file, export or dependency', { timeout: 60_000 }, async () => {
    const outcome = await run(join(REPO, 'node_modules/.bin/knip'), ['--no-progress', '--no-config-hints'], { cwd: REPO }).then(
      ({ stdout }) => ({ ok: true, output: stdout }),
      (error: { stdout?: string; stderr?: string }) => ({ ok: false, output: `${error.stdout ?? ''}${error.stderr ?? ''}` }),
    );
    expect(outcome.ok, `knip found unused code (npm run lint:unused):\n${outcome.output}`).toBe(true);
  });
});
