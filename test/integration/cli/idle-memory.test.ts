import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { spawnCli } from '../../helpers/cli.js';
import { setupBot, startTestEmulator } from '../../helpers/emulator.js';
import { call } from '../../helpers/http.js';

/**
 * The idle daemon gives back the young generation its start-up grew (issue 25, part 3;
 * src/cli/idle-memory.ts): `node dist/cli/main.js run` with nothing set, as the bin starts it.
 * V8 grows the young generation while the modules load (to 16 MiB semi-spaces here); without the
 * daemon's own collection once idle it stays grown until V8's memory reducer runs, 8 s to more
 * than a minute later. Read twice: the daemon's log line, and its own /metrics (prom-client's
 * heap space gauges), so the line cannot claim what the process does not show.
 */

const newSpaceBytes = (metrics: string) => Number(/^nodejs_heap_space_size_total_bytes\{space="new"\} (\d+)/m.exec(metrics)?.[1] ?? Number.NaN);

describe('the daemons give back start-up memory once idle', () => {
  it('shrinks V8 young generation within seconds of the start, as /metrics shows', { timeout: 40_000 }, async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const dir = await mkdtemp(join(tmpdir(), 'la-idle-memory-'));
    await writeFile(
      join(dir, 'config.json'),
      JSON.stringify({
        service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 },
        // A reward hook no vote reaches here: votes need one to start.
        votes: { enabled: true, hooks: [{ url: 'http://127.0.0.1:1/rewards' }] },
        health: { listen: '127.0.0.1:0' },
        state: { directory: './state' },
        log: { format: 'json', level: 'debug' },
      }),
    );
    const cli = spawnCli(['run', '--config', 'config.json'], { cwd: dir, env: {} });
    const base: string = JSON.parse(await cli.lineContaining('health server listening')).url;
    await cli.lineContaining('agent ready');
    const grown = newSpaceBytes((await call(`${base}/metrics`)).text);

    const line = JSON.parse(await cli.lineContaining('start-up memory', 30_000)) as { msg: string; attempt: number; youngGenerationBytes: [number, number] };
    expect(line.msg).toBe('start-up memory given back');
    const [before, after] = line.youngGenerationBytes;
    expect(grown).toBeGreaterThan(after);
    expect(after).toBeLessThan(before);
    expect(after).toBeLessThanOrEqual(2 * 2 ** 20);
    expect(newSpaceBytes((await call(`${base}/metrics`)).text)).toBeLessThanOrEqual(after);

    cli.child.kill('SIGTERM');
    expect(await cli.exit()).toBe(0);
  });

  it('does the same in webhooks serve, the receiver run alone', { timeout: 40_000 }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'la-idle-memory-serve-'));
    await writeFile(
      join(dir, 'config.json'),
      JSON.stringify({
        service: { token: 'a.b.c' },
        webhooks: { enabled: true, listen: '127.0.0.1:0', secrets: ['whs_idle_memory_test_secret'] },
        votes: { hooks: [{ url: 'http://127.0.0.1:1/rewards' }] },
        state: { directory: './state' },
        log: { format: 'json', level: 'debug' },
      }),
    );
    const cli = spawnCli(['webhooks', 'serve', '--config', 'config.json'], { cwd: dir, env: {} });
    await cli.lineContaining('webhook receiver listening');
    const line = JSON.parse(await cli.lineContaining('start-up memory', 30_000)) as { msg: string; youngGenerationBytes: [number, number] };
    expect(line.msg).toBe('start-up memory given back');
    const [before, after] = line.youngGenerationBytes;
    expect(after).toBeLessThan(before);
    expect(after).toBeLessThanOrEqual(2 * 2 ** 20);
    cli.child.kill('SIGTERM');
    expect(await cli.exit()).toBe(0);
  });
});
