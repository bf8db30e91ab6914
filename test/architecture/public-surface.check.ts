import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { apiEntries, runApiReports } from '../../scripts/api-report.js';
import { checkPackage } from '../../scripts/package-check.js';
import { packedTarball } from '../runtimes/packed.js';

/**
 * The package's public surface (issue 18): the root stays short, every subpath's API report in
 * api/ matches the built declarations (so a public name cannot appear, vanish or change by
 * accident: `npm run api:update` rewrites them on purpose), and the `exports` map is sound for
 * publint and arethetypeswrong, on the tarball `npm run check` packed once. Needs dist/ (`npm run
 * check` builds first).
 */

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const temps: string[] = [];
afterAll(async () => {
  await Promise.all(temps.map((dir) => rm(dir, { recursive: true, force: true })));
});

/** The names a report declares at its top level. */
function declaredNames(report: string): string[] {
  const names: string[] = [];
  for (const match of report.matchAll(/^export (?:declare )?(?:abstract )?(?:function|class|interface|type|const|enum|namespace) (\w+)/gm)) {
    names.push(match[1]!);
  }
  return [...new Set(names)];
}

describe('the public surface', () => {
  it('has a committed API report for every entry of exports, and none for a removed one', async () => {
    const expected = apiEntries(REPO).map((entry) => `${entry.name}.api.md`).sort();
    expect(expected).toContain('index.api.md');
    expect(expected).toContain('client.api.md');
    expect((await readdir(join(REPO, 'api'))).sort()).toEqual(expected);
  });

  it('keeps the root to what a bot owner uses: at most 20 names, createListingAgent and loadConfig among them', async () => {
    const names = declaredNames(await readFile(join(REPO, 'api', 'index.api.md'), 'utf8'));
    expect(names).toContain('createListingAgent');
    expect(names).toContain('loadConfig');
    expect(names).toContain('ListingAgentError');
    expect(names).toContain('VoteHook');
    expect(names.length).toBeLessThanOrEqual(20);
    // The parts live under their subpaths, not at the root.
    for (const part of ['createListingClient', 'verifyDelivery', 'startEmulator', 'createRedisConnection', 'createVotePipeline']) {
      expect(names).not.toContain(part);
    }
  });

  it('matches every committed API report, and notices a report that differs', { timeout: 60_000 }, async () => {
    const results = runApiReports(REPO, false);
    expect(results.filter((result) => result.changed).map((result) => result.name), 'run npm run api:update and review the diff').toEqual([]);
    expect(results.flatMap((result) => result.problems)).toEqual([]);

    // A name dropped from the committed root report (as if the code had grown one) is caught.
    const folder = await mkdtemp(join(tmpdir(), 'api-report-'));
    temps.push(folder);
    await cp(join(REPO, 'api'), folder, { recursive: true });
    const root = await readFile(join(folder, 'index.api.md'), 'utf8');
    await writeFile(join(folder, 'index.api.md'), root.replace(/^export function loadConfig.*$/m, ''));
    const tampered = runApiReports(REPO, false, folder);
    expect(tampered.filter((result) => result.changed).map((result) => result.name)).toEqual(['index']);
  });

  it('passes publint and arethetypeswrong as npm would publish it', { timeout: 90_000 }, async () => {
    for (const result of await checkPackage(REPO, packedTarball())) {
      expect(result.ok, `${result.tool}:\n${result.output}`).toBe(true);
    }
  });
});
