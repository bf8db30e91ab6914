import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { spawnCli } from '../../helpers/cli.js';
import { setupBot, startTestEmulator } from '../../helpers/emulator.js';
import { call } from '../../helpers/http.js';
import { sendOnFreshConnection } from '../../helpers/sockets.js';

async function workspace(config: unknown, dotenv?: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'la-run-'));
  await writeFile(join(dir, 'config.json'), JSON.stringify(config, null, 2));
  if (dotenv !== undefined) await writeFile(join(dir, '.env'), dotenv);
  return dir;
}

describe('listing-agent run (the daemon, as a child process)', () => {
  it('serves health and metrics, stops on SIGTERM with exit 0 and a flushed state file, and logs no secret', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const dir = await workspace({
      service: { token: '${LISTING_PROJECT_TOKEN}', v1: emu.urls.v1, v0: emu.urls.v0 },
      health: { listen: '127.0.0.1:0' },
      state: { directory: './state' },
      log: { format: 'json', level: 'debug' },
    });
    const cli = spawnCli(['run', '--config', 'config.json'], { cwd: dir, env: { LISTING_PROJECT_TOKEN: fx.projectToken } });
    const listening = JSON.parse(await cli.lineContaining('health server listening'));
    await cli.lineContaining('agent ready');
    const base: string = listening.url;

    expect((await call(`${base}/healthz`)).status).toBe(200);
    const ready = await call(`${base}/readyz`);
    expect(ready.status).toBe(200);
    expect(ready.body.components.service.ready).toBe(true);
    const metrics = await call(`${base}/metrics`);
    expect(metrics.text).toContain('listing_agent_ready 1');
    expect(metrics.text).toContain('process_cpu_user_seconds_total');

    const started = Date.now();
    cli.child.kill('SIGTERM');
    expect(await cli.exit()).toBe(0);
    expect(Date.now() - started).toBeLessThan(10_000);

    const state = JSON.parse(await readFile(join(dir, 'state', 'state.json'), 'utf8'));
    expect(state.data['agent:lastRun'].stoppedAt).toMatch(/^\d{4}-/);
    const logs = cli.stdout() + cli.stderr();
    expect(logs).toContain('"msg":"stopping"');
    expect(logs).not.toContain(fx.projectToken);
    for (const part of fx.projectToken.split('.')) expect(logs).not.toContain(part);
  });

  it('answers only its own names on its health port: a rebinding Host gets 421 naming the setting and its variable', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const service = { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 };
    const dir = await workspace({ service, health: { listen: '127.0.0.1:0' }, log: { format: 'json' } });
    const env = { LISTING_AGENT_HEALTH_ALLOWED_HOSTS: 'agent.internal, metrics.internal' };
    const cli = spawnCli(['run', '--config', 'config.json'], { cwd: dir, env });
    const base: string = JSON.parse(await cli.lineContaining('health server listening')).url;
    await cli.lineContaining('agent ready');
    const as = (host: string, path: string) => sendOnFreshConnection(`${base}${path}`, { headers: { host } });

    for (let i = 0; i < 3; i += 1) {
      const refused = await as('rebind.attacker.example', '/status.json');
      expect(refused.status).toBe(421);
      expect(refused.text).toContain('add the name to health.allowedHosts (LISTING_AGENT_HEALTH_ALLOWED_HOSTS)');
    }
    expect((await as('agent.internal:9464', '/status.json')).status).toBe(200);
    expect((await as('metrics.internal', '/metrics')).status).toBe(200);
    cli.child.kill('SIGTERM');
    expect(await cli.exit()).toBe(0);
    const lines = cli.stdout().split('\n').filter((line) => line.includes('refused'));
    expect(lines.map((line) => JSON.parse(line).msg)).toEqual([
      'health server request refused: the Host rebind.attacker.example is not its listen address, localhost, an IP address ' +
        'or in health.allowedHosts (LISTING_AGENT_HEALTH_ALLOWED_HOSTS)',
      'health server requests refused in the last 10 s: 3 wrong_host (the first of each reason was logged)',
    ]);
  });

  it('takes its whole config from LISTING_AGENT_* variables and a .env file', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const dir = await mkdtemp(join(tmpdir(), 'la-run-env-'));
    await writeFile(join(dir, '.env'), `LISTING_AGENT_SERVICE_TOKEN=${fx.projectToken}\nLISTING_AGENT_LOG_FORMAT=json\n`);
    const cli = spawnCli(['run'], {
      cwd: dir,
      env: { LISTING_AGENT_SERVICE_V1: emu.urls.v1, LISTING_AGENT_SERVICE_V0: emu.urls.v0, LISTING_AGENT_HEALTH_LISTEN: '127.0.0.1:0' },
    });
    await cli.lineContaining('agent ready');
    cli.child.kill('SIGINT');
    expect(await cli.exit()).toBe(0);
  });

  it('refuses an invalid config with exit 78, every problem on its own line, no stack trace', async () => {
    const dir = await workspace({ service: { token: 'not-a-token' }, health: { listen: 'nowhere' }, votes: { hooks: [{ url: 'x' }] } });
    const cli = spawnCli(['run', '--config', 'config.json'], { cwd: dir, env: {} });
    expect(await cli.exit()).toBe(78);
    const err = cli.stderr();
    expect(err).toContain('service.token');
    expect(err).toContain('health.listen');
    expect(err).toContain('votes.hooks[0].url');
    expect(err).not.toMatch(/\n\s+at /);
  });

  it('says which file is missing, and which .env line is malformed, with exit 78', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'la-run-missing-'));
    const missing = spawnCli(['run', '--config', 'nope.json'], { cwd: dir, env: {} });
    expect(await missing.exit()).toBe(78);
    expect(missing.stderr()).toContain('nope.json');
    const broken = await workspace({ service: { token: 'a.b.c' } }, 'GOOD=1\nthis line is wrong\n');
    const dotenv = spawnCli(['run', '--config', 'config.json'], { cwd: broken, env: {} });
    expect(await dotenv.exit()).toBe(78);
    expect(dotenv.stderr()).toMatch(/\.env.*line 2/);
    expect(dotenv.stderr()).not.toMatch(/\n\s+at /);
  });

  it('exits 1 with one line when the health port is taken or the state directory cannot be written', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      const dir = await workspace({ service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 }, health: { listen: `127.0.0.1:${port}` } });
      const taken = spawnCli(['run', '--config', 'config.json'], { cwd: dir, env: {} });
      expect(await taken.exit()).toBe(1);
      // The daemon reads the variable too: its message names both.
      expect(taken.stderr()).toContain(`127.0.0.1:${port} is in use: set health.listen to a free port (LISTING_AGENT_HEALTH_LISTEN) or stop the other process`);
      expect(taken.stderr().trim().split('\n')).toHaveLength(1);
    } finally {
      blocker.close();
    }
    const dir = await workspace({
      service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 },
      health: { enabled: false },
      state: { directory: './config.json/state' },
    });
    const unwritable = spawnCli(['run', '--config', 'config.json'], { cwd: dir, env: {} });
    expect(await unwritable.exit()).toBe(1);
    expect(unwritable.stderr()).toContain('state.directory');
    expect(unwritable.stderr().trim().split('\n')).toHaveLength(1);
  });
});
