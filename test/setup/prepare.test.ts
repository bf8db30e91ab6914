import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fakeAptGet as writeFakeAptGet, writeExecutable as executable } from './fake-apt-get.js';
import { prepareSystemPrograms, type SetupEnvironment } from './prepare.js';
import { SYSTEM_PROGRAMS, type SystemProgram } from './programs.js';

/**
 * The setup's real probing and apt-get calls, on a PATH made of temporary directories only: the
 * apt-get found there is a fake (a Node script) that logs its calls, so nothing is ever installed.
 */

const REDIS: SystemProgram = SYSTEM_PROGRAMS[0];
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'la-test-setup-'));
  dirs.push(dir);
  return dir;
}

function fakeAptGet(bin: string, options: { installExit: number; creates?: string }) {
  return writeFakeAptGet(bin, join(bin, '..', 'apt-calls.log'), options);
}

function run(env: Record<string, string>, root: boolean): { result: ReturnType<typeof prepareSystemPrograms>; output: string } {
  let output = '';
  const environment: SetupEnvironment = { env, root, write: (text) => (output += text) };
  return { result: prepareSystemPrograms([REDIS], environment), output };
}

describe('the test setup on a PATH without redis-server', () => {
  it('uses a redis-server on PATH and prints nothing', () => {
    const bin = join(tempDir(), 'bin');
    mkdirSync(bin);
    const server = executable(join(bin, 'redis-server'), '#!/bin/sh\n');
    const apt = fakeAptGet(bin, { installExit: 0 });
    const { result, output } = run({ PATH: bin }, true);
    expect(result).toEqual({ paths: { 'redis-server': server }, skipLines: [] });
    expect(output).toBe('');
    expect(apt.calls()).toEqual([]);
  });

  it('uses REDIS_SERVER over PATH', () => {
    const root = tempDir();
    const server = executable(join(root, 'my-redis'), '#!/bin/sh\n');
    const { result } = run({ PATH: join(root, 'none'), REDIS_SERVER: server }, false);
    expect(result.paths['redis-server']).toBe(server);
  });

  it('with installs switched off, skips with one loud line and never runs apt-get', () => {
    const bin = join(tempDir(), 'bin');
    mkdirSync(bin);
    const apt = fakeAptGet(bin, { installExit: 0, creates: join(bin, 'redis-server') });
    const { result, output } = run({ PATH: bin, LISTING_AGENT_TEST_NO_INSTALL: '1' }, true);
    expect(result.paths['redis-server']).toBeNull();
    expect(output.trim().split('\n')).toEqual([result.skipLines[0]]);
    expect(output).toContain(`SKIPPING the ${REDIS.testFiles.length} test files that need it: redis-server is not on PATH`);
    expect(output).toContain('Fix: apt-get install redis-server');
    expect(apt.calls()).toEqual([]);
  });

  it('without root, skips naming sudo apt-get and never runs apt-get', () => {
    const bin = join(tempDir(), 'bin');
    mkdirSync(bin);
    const apt = fakeAptGet(bin, { installExit: 0, creates: join(bin, 'redis-server') });
    const { result, output } = run({ PATH: bin }, false);
    expect(result.paths['redis-server']).toBeNull();
    expect(output).toContain('Fix: sudo apt-get install redis-server   or: REDIS_SERVER=/path/to/redis-server npm test');
    expect(apt.calls()).toEqual([]);
  });

  it('as root, installs with apt-get (update, then a quiet install without recommends) and uses what it installed', () => {
    const bin = join(tempDir(), 'bin');
    mkdirSync(bin);
    const apt = fakeAptGet(bin, { installExit: 0, creates: join(bin, 'redis-server') });
    const { result, output } = run({ PATH: bin }, true);
    expect(result).toEqual({ paths: { 'redis-server': join(bin, 'redis-server') }, skipLines: [] });
    expect(output.trim().split('\n')).toEqual([
      `[test setup] redis-server is not on PATH: installing Debian's redis-server package (apt-get install redis-server) for the ${REDIS.testFiles.length} test files that need it`,
    ]);
    expect(apt.calls()).toEqual([
      'update -qq DEBIAN_FRONTEND=noninteractive',
      'install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=120 redis-server DEBIAN_FRONTEND=noninteractive',
    ]);
  });

  it('as root, an install that fails (apt-get exits 100) ends in a skip with its reason, not a throw', () => {
    const bin = join(tempDir(), 'bin');
    mkdirSync(bin);
    const apt = fakeAptGet(bin, { installExit: 100 });
    const { result, output } = run({ PATH: bin }, true);
    expect(result.paths['redis-server']).toBeNull();
    const lines = output.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toContain('installing');
    expect(lines[1]).toBe(result.skipLines[0]);
    expect(lines[1]).toContain('`apt-get install redis-server` failed (exit 100: E: Unable to locate package redis-server)');
    expect(lines[1]).toContain('Fix: apt-get install redis-server');
    expect(apt.calls()).toHaveLength(2);
  });

  it('as root, an install that succeeds without putting redis-server on PATH ends in a skip, and is not retried', () => {
    const bin = join(tempDir(), 'bin');
    mkdirSync(bin);
    const apt = fakeAptGet(bin, { installExit: 0 });
    const { result } = run({ PATH: bin }, true);
    expect(result.paths['redis-server']).toBeNull();
    expect(result.skipLines[0]).toContain('installed, yet redis-server is not on PATH');
    expect(apt.calls()).toHaveLength(2);
  });
});
