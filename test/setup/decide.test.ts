import { describe, expect, it } from 'vitest';
import { decideProgram, type ProgramProbe } from './decide.js';
import { SYSTEM_PROGRAMS, type SystemProgram } from './programs.js';

const REDIS: SystemProgram = SYSTEM_PROGRAMS[0];
const SYSTEMD: SystemProgram = SYSTEM_PROGRAMS[1];
const MISSING: ProgramProbe = { root: true, aptGet: true, installDisabled: false };

describe('the decision for one system program', () => {
  it('uses what was found, whoever runs, and never installs it', () => {
    for (const root of [true, false]) {
      expect(decideProgram(REDIS, { ...MISSING, root, found: '/usr/bin/redis-server' })).toEqual({ action: 'use', path: '/usr/bin/redis-server' });
    }
    expect(decideProgram(REDIS, { ...MISSING, override: '/opt/redis/bin/redis-server', found: '/opt/redis/bin/redis-server' })).toEqual({
      action: 'use',
      path: '/opt/redis/bin/redis-server',
    });
  });

  it('installs the Debian package as root when apt-get is there, in one line naming it', () => {
    const decision = decideProgram(REDIS, MISSING);
    expect(decision.action).toBe('install');
    expect(decision).toMatchObject({ line: expect.stringContaining('apt-get install redis-server') });
    expect(decideProgram(SYSTEMD, MISSING)).toMatchObject({ action: 'install', line: expect.stringContaining('apt-get install systemd') });
  });

  it('skips without root, with the line naming sudo apt-get and the override', () => {
    const decision = decideProgram(REDIS, { ...MISSING, root: false });
    expect(decision.action).toBe('skip');
    const line = (decision as { line: string }).line;
    expect(line).toContain(`SKIPPING the ${REDIS.testFiles.length} test files that need it`);
    expect(line).toContain('Fix: sudo apt-get install redis-server');
    expect(line).toContain('REDIS_SERVER=/path/to/redis-server npm test');
    expect(line).not.toContain('\n');
  });

  it('skips as root when installs are switched off, naming apt-get without sudo', () => {
    const decision = decideProgram(REDIS, { ...MISSING, installDisabled: true });
    expect(decision).toMatchObject({ action: 'skip', line: expect.stringContaining('LISTING_AGENT_TEST_NO_INSTALL=1') });
    expect((decision as { line: string }).line).toMatch(/Fix: apt-get install redis-server /);
  });

  it('skips without apt-get, naming the package and the override', () => {
    const decision = decideProgram(SYSTEMD, { ...MISSING, aptGet: false });
    expect(decision.action).toBe('skip');
    const line = (decision as { line: string }).line;
    expect(line).toContain('the test file that needs it (test/integration/deploy/systemd.test.ts)');
    expect(line).toContain('no apt-get');
    expect(line).toContain('SYSTEMD_ANALYZE=/path/to/systemd-analyze npm test');
  });

  it('skips after a failed install with apt-get\'s reason, and never installs twice', () => {
    const decision = decideProgram(REDIS, { ...MISSING, installFailed: 'exit 100: E: Unable to locate package redis-server' });
    expect(decision.action).toBe('skip');
    expect((decision as { line: string }).line).toContain('`apt-get install redis-server` failed (exit 100: E: Unable to locate package redis-server)');
  });

  it('skips an override that is not an executable, rather than installing over the user\'s choice', () => {
    const decision = decideProgram(REDIS, { ...MISSING, override: '/nowhere/redis-server' });
    expect(decision.action).toBe('skip');
    expect((decision as { line: string }).line).toContain('REDIS_SERVER=/nowhere/redis-server is not an executable file');
  });
});
