import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { setupBot, startTestEmulator } from '../helpers/emulator.js';
import { startFakeDiscord } from '../helpers/fake-discord/index.js';
import { botProject } from './packed.js';
import { runWithRuntime, RUNTIME_KIND } from './runtime.js';
import { warningLines } from './warnings.js';

/**
 * The packed package in a CommonJS bot and in an ES module bot (test/runtimes/bots/), each a
 * discord.js client on the fake gateway with the agent in three lines, run with the runtime under
 * test: the agent starts at the client's ready, posts the server count to the emulator, and stops
 * when the client is destroyed; the process then ends by itself, with nothing printed as a warning.
 */

async function runBot(type: 'commonjs' | 'module', file: string, guilds: number) {
  const fake = await startFakeDiscord({ shardCount: 1, guilds });
  const emu = await startTestEmulator();
  const fx = setupBot(emu);
  const project = await botProject(type, file);
  const stateDir = await mkdtemp(join(tmpdir(), 'la-bot-state-'));
  const bot = runWithRuntime([project.main], {
    cwd: project.dir,
    env: { LISTING_AGENT_SERVICE_TOKEN: fx.projectToken, LISTING_V1: emu.urls.v1, LISTING_V0: emu.urls.v0, STATE_DIR: stateDir, DISCORD_API: fake.restUrl, DISCORD_TOKEN: fake.token },
  });
  const code = await bot.exit();
  return { code, output: bot.output(), metrics: emu.admin.metrics(fx.projectId), stateDir };
}

/**
 * The undici copies the bot printed: on Node, the agent's first post loaded no undici of its own
 * (issue 25: it uses discord.js's, found at the bot's top level), and every copy loaded is one of
 * discord.js's (this repository nests one under discord.js and one under @discordjs/rest).
 * Counted on Node only: Bun answers `undici` with its own stand-in, and neither Bun nor Deno
 * promises Node's `require.cache`.
 */
function expectDiscordUndiciOnly(output: string): void {
  const line = output.split('\n').find((l) => l.startsWith('undici copies '));
  expect(line, output).toBeDefined();
  if (RUNTIME_KIND !== 'node') return;
  const { beforePost, afterPost } = JSON.parse(line!.slice('undici copies '.length)) as { beforePost: string[]; afterPost: string[] };
  expect(beforePost.length).toBeGreaterThan(0);
  expect(afterPost).toEqual(beforePost);
  for (const path of afterPost) expect(path).toMatch(/node_modules\/(discord\.js|@discordjs\/[^/]+)\/node_modules\/undici\/index\.js$/);
}

// npm pack (once per file) and a runtime's start are slow on a loaded machine: a minute each.
describe(`the packed package from a bot project (${RUNTIME_KIND})`, { timeout: 60_000 }, () => {
  it('CommonJS bot, packed: require() of the root and every subpath; one copy with import(); posts with discord.js\'s undici and stops with the client', async () => {
    const { code, output, metrics, stateDir } = await runBot('commonjs', 'cjs-bot.cjs', 4);
    expect(output).toContain('posted 4 servers');
    expectDiscordUndiciOnly(output);
    expect(output).toContain('one copy of the package');
    expect(output).toContain('agent stopped');
    expect(code, output).toBe(0);
    expect(metrics.map((m) => m.metrics.server_count)).toEqual([4]);
    const state = JSON.parse(await readFile(join(stateDir, 'state.json'), 'utf8')) as { data: Record<string, { stoppedAt?: string }> };
    expect(state.data['agent:lastRun']?.stoppedAt).toEqual(expect.any(String));
    expect(warningLines(output)).toEqual([]);
  });

  it('ES module bot, packed: import of the root and every subpath; one copy with require(); posts with discord.js\'s undici and stops with the client', async () => {
    const { code, output, metrics } = await runBot('module', 'esm-bot.mjs', 6);
    expect(output).toContain('one copy of the package');
    expect(output).toContain('posted 6 servers');
    expectDiscordUndiciOnly(output);
    expect(output).toContain('agent stopped');
    expect(code, output).toBe(0);
    expect(metrics.map((m) => m.metrics.server_count)).toEqual([6]);
    expect(warningLines(output)).toEqual([]);
  });
});
