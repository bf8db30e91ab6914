import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { setupBot, startTestEmulator } from '../helpers/emulator.js';
import { startFakeDiscordRest } from '../helpers/fake-discord/index.js';
import { startVoteHookServer } from '../helpers/vote-hook-server.js';
import { botProject, installedCli } from './packed.js';
import { runWithRuntime, RUNTIME_KIND } from './runtime.js';
import { warningLines } from './warnings.js';

/**
 * The packed package's CLI, run with the runtime under test from a bot project where it is
 * installed (as `npx listing-agent` runs it): the demo, and the daemon with its health server off.
 * Each ends cleanly on SIGINT or SIGTERM, with nothing printed as a warning.
 */

// npm pack (once per file) and a runtime's start are slow on a loaded machine: a minute each.
describe(`the packed CLI (${RUNTIME_KIND})`, { timeout: 60_000 }, () => {
  it('listing-agent demo: posts, rewards votes, receives a signed webhook, and ends cleanly on Ctrl-C', async () => {
    const project = await botProject('commonjs');
    const demo = runWithRuntime([installedCli(project), 'demo'], { cwd: project.dir });
    await demo.line('[listing]  the emulator now shows');
    await demo.line(': reward given');
    await demo.line('arrived by signed webhook');
    demo.child.kill('SIGINT');
    expect(await demo.exit(), demo.output()).toBe(0);
    const output = demo.output();
    expect(output).toContain('demo over.');
    expect(output).not.toContain('unexpected failure');
    expect(warningLines(output)).toEqual([]);
  });

  it('listing-agent run, health off: posts the counts, rewards a vote through an http hook, and stops on SIGTERM with exit 0', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const voter = emu.admin.createUser({ username: 'voter' });
    emu.admin.castVote({ project_id: fx.projectId, user_id: voter.id });
    const discord = await startFakeDiscordRest({ approximateGuildCount: 321, recommendedShards: 1, token: 'fake-bot-token' });
    const hook = await startVoteHookServer();
    const project = await botProject('commonjs');
    const config = {
      service: { token: '${LISTING_PROJECT_TOKEN}', v1: emu.urls.v1, v0: emu.urls.v0 },
      discord: { token: 'fake-bot-token', apiBaseUrl: discord.url },
      stats: { enabled: true, source: 'discord-rest', rest: { shardCount: 1 } },
      votes: { enabled: true, pollInterval: '5s', lookback: '1h', hooks: [{ name: 'reward', url: hook.url }] },
      health: { enabled: false },
      state: { directory: './state' },
      log: { format: 'json' },
    };
    await writeFile(join(project.dir, 'config.json'), JSON.stringify(config));
    const daemon = runWithRuntime([installedCli(project), 'run', '--config', 'config.json'], { cwd: project.dir, env: { LISTING_PROJECT_TOKEN: fx.projectToken } });
    await daemon.line('agent ready');
    await expect.poll(() => emu.admin.metrics(fx.projectId).map((m) => m.metrics.server_count), { timeout: 15_000, interval: 50 }).toEqual([321]);
    await expect.poll(() => hook.calls.length, { timeout: 15_000, interval: 50 }).toBe(1);
    expect([voter.id, voter.platform_id]).toContain(hook.calls[0]!.userId);
    daemon.child.kill('SIGTERM');
    expect(await daemon.exit(), daemon.output()).toBe(0);
    const output = daemon.output();
    expect(output).toContain('"msg":"stopping"');
    expect(output).not.toContain('health server listening');
    expect(output).not.toContain(fx.projectToken);
    // Nothing failed on the way (a hook call that went through but was read as failed logs a warning).
    expect(output.split('\n').filter((line) => /"level":"(warn|error|fatal)"/.test(line))).toEqual([]);
    expect(hook.calls).toHaveLength(1);
    expect(warningLines(output)).toEqual([]);
  });
});
