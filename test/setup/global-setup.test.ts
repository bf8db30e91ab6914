import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { fakeAptGet } from './fake-apt-get.js';
import { SYSTEM_PROGRAMS } from './programs.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const VITEST = join(REPO, 'node_modules/vitest/vitest.mjs');

function testFiles(dir = join(REPO, 'test')): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(path);
    return entry.name.endsWith('.test.ts') ? [relative(REPO, path)] : [];
  });
}

describe('the table of system programs', () => {
  // This folder's own tests name the programs too: they are not files that need one.
  const files = testFiles()
    .filter((file) => !file.startsWith('test/setup/'))
    .map((file) => ({ file, text: readFileSync(join(REPO, file), 'utf8') }));

  it('lists exactly the files that ask for each program, and each of them skips on it', () => {
    for (const program of SYSTEM_PROGRAMS) {
      const asking = files.filter(({ text }) => text.includes(`programPath('${program.name}')`)).map(({ file }) => file);
      expect(asking.sort(), program.name).toEqual([...program.testFiles].sort());
      for (const file of asking) expect(readFileSync(join(REPO, file), 'utf8'), file).toMatch(/\.skipIf\(/);
    }
  });

  it('lists every file that starts a redis-server, so none fails on a machine without one', () => {
    // startTestSentinels() and startTestCluster() start their servers with startTestRedis().
    const starters = ['startTestRedis(', 'startTestSentinels(', 'startTestCluster('];
    const starting = files.filter(({ text }) => starters.some((starter) => text.includes(starter))).map(({ file }) => file);
    const redis = SYSTEM_PROGRAMS.find((program) => program.name === 'redis-server')!;
    expect(starting.sort()).toEqual([...redis.testFiles].sort());
  });
});

describe('npm test on a machine without redis-server, installs switched off', () => {
  const temp = mkdtempSync(join(tmpdir(), 'la-no-redis-'));
  afterAll(() => rmSync(temp, { recursive: true, force: true }));

  it('runs the real global setup: the Redis files are skipped with the one loud line, apt-get is never run, and the run passes', { timeout: 60_000 }, async () => {
    // The PATH holds one directory with nothing but an apt-get that would "install" redis-server:
    // LISTING_AGENT_TEST_NO_INSTALL=1 must keep the setup from running it, root or not.
    const bin = join(temp, 'bin');
    mkdirSync(bin);
    const apt = fakeAptGet(bin, join(temp, 'apt-calls.log'), { installExit: 0, creates: join(bin, 'redis-server') });
    const env = { PATH: bin, HOME: temp, NO_COLOR: '1', LISTING_AGENT_TEST_NO_INSTALL: '1' };
    const file = 'test/integration/redis/connection.test.ts';
    const { code, output } = await new Promise<{ code: number; output: string }>((resolve) => {
      execFile(process.execPath, [VITEST, 'run', file, '--maxWorkers=1'], { cwd: REPO, env, timeout: 50_000 }, (error, stdout, stderr) =>
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, output: stdout + stderr }),
      );
    });
    expect(code, output).toBe(0);
    expect(output).toMatch(/Test Files\s+1 skipped \(1\)/);
    expect(apt.calls()).toEqual([]);
    const redisLines = output.split('\n').filter((line) => line.includes(`SKIPPING the ${SYSTEM_PROGRAMS[0].testFiles.length} test files that need it: redis-server`));
    // Once when decided, once more after the summary.
    expect(redisLines, output).toHaveLength(2);
    expect(redisLines[0]).toContain('is not on PATH (LISTING_AGENT_TEST_NO_INSTALL=1: no install)');
    expect(redisLines[0]).toMatch(/Fix: (sudo )?apt-get install redis-server {3}or: REDIS_SERVER=\/path\/to\/redis-server npm test$/);
    expect(output).toContain('SKIPPING the test file that needs it (test/integration/deploy/systemd.test.ts): systemd-analyze is not on PATH');
  });
});
