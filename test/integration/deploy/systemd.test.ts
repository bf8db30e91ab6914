import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { programPath } from '../../setup/provided.js';
import { CLI_PATH, readRepoFile, unitSettings } from './deploy-files.js';

/**
 * deploy/listing-agent.service, checked by systemd's own tool. The test setup (test/setup/) finds
 * `systemd-analyze`, or installs Debian's `systemd` package as root; without it the three checks
 * below are skipped with one line saying how to get it. systemd need not be running: `verify`
 * and `security --offline` read the file.
 */

const UNIT = readRepoFile('deploy/listing-agent.service');
const INSTALLED_EXEC_START = 'ExecStart=/usr/bin/node --max-semi-space-size=2 /opt/listing-agent/dist/cli/main.js run --config /etc/listing-agent/config.json';
const INSTALLED_ENV_FILE = 'EnvironmentFile=-/etc/listing-agent/listing-agent.env';

const SYSTEMD_ANALYZE = programPath('systemd-analyze');
const available = SYSTEMD_ANALYZE !== undefined;

const temp = mkdtempSync(join(tmpdir(), 'listing-agent-unit-'));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

function analyze(args: string[]) {
  const result = spawnSync(SYSTEMD_ANALYZE ?? 'systemd-analyze', args, {
    encoding: 'utf8',
    env: { ...process.env, SYSTEMD_LOG_COLOR: '0', SYSTEMD_PAGER: '', SYSTEMD_COLORS: '0' },
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/**
 * The unit as it would be installed from this checkout: `verify` checks that ExecStart's binary
 * exists, so the real node binary and this checkout's built CLI replace the /opt paths, and the
 * config and environment file are real files in a temporary directory.
 */
function localUnit(dir: string): string {
  const config = join(dir, 'config.json');
  const envFile = join(dir, 'listing-agent.env');
  writeFileSync(config, JSON.stringify({ service: { token: '${LISTING_AGENT_TEST_TOKEN}' } }));
  writeFileSync(envFile, 'LISTING_AGENT_LOG_LEVEL=info\n', { mode: 0o600 });
  const text = UNIT.replace(INSTALLED_EXEC_START, `ExecStart="${process.execPath}" --max-semi-space-size=2 "${CLI_PATH}" run --config "${config}"`).replace(
    INSTALLED_ENV_FILE,
    `EnvironmentFile=-${envFile}`,
  );
  const path = join(dir, 'listing-agent.service');
  writeFileSync(path, text);
  return path;
}

describe('deploy/listing-agent.service', () => {
  it('runs the built CLI from /opt/listing-agent with the config and env file from /etc/listing-agent', () => {
    // The README's install steps use these paths; the verification below substitutes them.
    expect(UNIT).toContain(`\n${INSTALLED_EXEC_START}\n`);
    expect(UNIT).toContain(`\n${INSTALLED_ENV_FILE}\n`);
    expect(existsSync(CLI_PATH), `${CLI_PATH} missing: run npm run build`).toBe(true);
  });

  it('restarts on failure but not on a bad config, and stops gracefully', () => {
    const settings = unitSettings(UNIT);
    expect(settings.get('Service.Type')).toEqual([expect.stringMatching(/^(simple|exec)$/)]);
    expect(settings.get('Service.Restart')).toEqual(['on-failure']);
    expect(settings.get('Service.RestartPreventExitStatus')?.join(' ').split(/\s+/)).toContain('78');
    expect(settings.get('Service.KillSignal')).toEqual(['SIGTERM']);
    // The agent's own deadline is 10 s; systemd waits longer before SIGKILL.
    expect(Number(settings.get('Service.TimeoutStopSec')?.[0])).toBeGreaterThan(10);
    expect(settings.get('Service.StateDirectory')).toEqual(['listing-agent']);
    expect(settings.get('Service.Environment')).toContain('LISTING_AGENT_STATE_DIRECTORY=%S/listing-agent');
    // The idle footprint's settings, the same as the container's (BENCHMARKS.md, "Footprint").
    expect(settings.get('Service.Environment')).toContain('MALLOC_MMAP_THRESHOLD_=131072');
    expect(settings.get('Service.ExecStart')?.[0]).toContain('node --max-semi-space-size=2 ');
    expect(settings.get('Install.WantedBy')).toEqual(['multi-user.target']);
  });

  it('is hardened, and leaves MemoryDenyWriteExecute off for V8', () => {
    const settings = unitSettings(UNIT);
    const expected: Record<string, string> = {
      DynamicUser: 'yes',
      ProtectSystem: 'strict',
      ProtectHome: 'yes',
      PrivateTmp: 'yes',
      PrivateDevices: 'yes',
      NoNewPrivileges: 'yes',
      ProtectKernelTunables: 'yes',
      ProtectKernelModules: 'yes',
      ProtectKernelLogs: 'yes',
      ProtectControlGroups: 'yes',
      ProtectClock: 'yes',
      ProtectHostname: 'yes',
      RestrictAddressFamilies: 'AF_INET AF_INET6 AF_UNIX',
      RestrictNamespaces: 'yes',
      RestrictRealtime: 'yes',
      RestrictSUIDSGID: 'yes',
      LockPersonality: 'yes',
      SystemCallArchitectures: 'native',
      SystemCallFilter: '@system-service',
      SystemCallErrorNumber: 'EPERM',
      CapabilityBoundingSet: '',
      AmbientCapabilities: '',
      UMask: '0077',
    };
    for (const [key, value] of Object.entries(expected)) {
      expect(settings.get(`Service.${key}`), key).toEqual([value]);
    }
    // V8's JIT needs writable and executable memory: node aborts under MemoryDenyWriteExecute=yes.
    expect(settings.has('Service.MemoryDenyWriteExecute')).toBe(false);
  });

  it.skipIf(!available)('passes systemd-analyze verify with no warning', () => {
    const unit = localUnit(temp);
    const result = analyze(['verify', unit]);
    // verify exits 0 on an unknown key or a bad value but prints a line for each: any output fails.
    expect(result.stderr.trim()).toBe('');
    expect(result.stdout.trim()).toBe('');
    expect(result.status).toBe(0);
  });

  it.skipIf(!available)('is caught by systemd-analyze verify when broken (the check above is real)', () => {
    const dir = mkdtempSync(join(temp, 'broken-'));
    const unit = localUnit(dir);
    writeFileSync(
      unit,
      readFileSync(unit, 'utf8')
        .replace(/^ExecStart=.*$/m, `ExecStart=${join(dir, 'no-such-node')} run`)
        .replace('DynamicUser=yes', 'DynamicUser=yes\nMemoryDenyWriteExecut=yes'),
    );
    const result = analyze(['verify', unit]);
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain("Unknown key 'MemoryDenyWriteExecut'");
    expect(result.stderr).toContain('is not executable');
  });

  it.skipIf(!available)('keeps systemd-analyze security exposure at 2.0 or below ("OK")', () => {
    const unit = localUnit(mkdtempSync(join(temp, 'security-')));
    // --threshold is on a 0-100 scale: 20 is the 2.0 that `security` prints. Now 1.7.
    const result = analyze(['security', '--offline=yes', '--threshold=20', '--no-pager', unit]);
    const overall = /Overall exposure level for listing-agent\.service: ([\d.]+)/.exec(result.stdout);
    expect(overall, result.stdout + result.stderr).not.toBeNull();
    expect(Number(overall![1])).toBeLessThanOrEqual(2);
    expect(result.status).toBe(0);
  });
});
