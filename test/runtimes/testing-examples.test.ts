import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packPackage } from '../../scripts/pack.js';
import { botProject, type BotProject } from './packed.js';
import { RUNTIME_KIND, runWithRuntime } from './runtime.js';

/*
 * Issue 36, done when: a fresh bot project that installs the packed tarball runs the example tests
 * of examples/testing/ green, with node's test runner (Bun's `bun test` runs the same file) and
 * with vitest, for a discord.js, an Eris and an Oceanic.js Client. `npm test` packs the package
 * once for this file (the runtime matrix hands it its tarball, LISTING_AGENT_PACKED, and runs it on
 * Node 20, 22, 24 and Bun).
 */

const REPO = resolve(import.meta.dirname, '..', '..');
const LIBRARIES = ['discord.js', 'eris', 'oceanic.js'] as const;
const EXAMPLES = ['reward-bot.mjs', 'clients.mjs', 'reward-bot.test.mjs', 'reward-bot.node-test.mjs'];

let folder: string | undefined;
let bot: BotProject;
beforeAll(async () => {
  if (!process.env.LISTING_AGENT_PACKED) {
    folder = await mkdtemp(join(tmpdir(), 'listing-agent-packed-'));
    process.env.LISTING_AGENT_PACKED = await packPackage(REPO, folder);
  }
  const fromPackage = Object.fromEntries(EXAMPLES.map((file) => [file, `examples/testing/${file}`]));
  bot = await botProject('module', undefined, { fromPackage, beside: ['eris', 'oceanic.js', 'vitest'] });
}, 120_000);
afterAll(async () => {
  if (folder === undefined) return;
  delete process.env.LISTING_AGENT_PACKED;
  await rm(folder, { recursive: true, force: true });
});

/** Runs a test command in the bot project; its exit code and output. */
async function runTests(args: string[], library: string) {
  const child = runWithRuntime(args, { cwd: bot.dir, env: { BOT_LIBRARY: library } });
  const code = await child.exit();
  // Without the colours a terminal would get.
  return { code, output: child.output().replace(/\u001b\[[0-9;]*m/g, '') };
}

describe('testing kit examples', () => {
  it.each(LIBRARIES)("testing kit examples: node's test runner (bun test on Bun), %s", async (library) => {
    const args = RUNTIME_KIND === 'bun' ? ['test', './reward-bot.node-test.mjs'] : ['--test', '--test-reporter=tap', 'reward-bot.node-test.mjs'];
    const { code, output } = await runTests(args, library);
    expect(code, output).toBe(0);
    expect(output).toMatch(RUNTIME_KIND === 'bun' ? /\b1 pass\b/ : /# pass 1\b/);
  });

  // vitest runs on Node: on Bun, node's test runner's file above is the example.
  it.skipIf(RUNTIME_KIND !== 'node')('testing kit examples: vitest, discord.js', async () => {
    const { code, output } = await runTests([join(bot.dir, 'node_modules', 'vitest', 'vitest.mjs'), 'run', 'reward-bot.test.mjs'], 'discord.js');
    expect(code, output).toBe(0);
    expect(output).toMatch(/Tests\s+1 passed/);
  });
});
