/**
 * `npm run check:undici`: one undici in a discord.js bot (issue 25). discord.js 14 (14.27 and
 * later) and @discordjs/rest depend on `undici ^6.27.0`; listing-agent accepts `^6.27.0 || ^7.30.2`
 * so that npm keeps the copy discord.js brings instead of adding undici 7 beside it.
 *
 * Installs, with the real npm from the registry (`--prefer-offline`: npm's cache answers what it
 * has), the packed package and discord.js 14 into temporary bot projects, the three ways a bot
 * owner gets there:
 *   fresh        `npm install` of a package.json naming both;
 *   added        a bot with discord.js installed, then `npm install listing-agent`;
 *   djs-after    listing-agent installed first, discord.js added later (npm keeps our undici 7
 *                and nests a 6 for discord.js), then `npm dedupe`.
 * For each: `npm ls undici`, the undici copies on disk (`npm query '#undici'`), and a bot process
 * that loads discord.js, makes a Client and sends one call with the agent's client to the
 * emulator (`listing-agent/emulator`), then lists the undici copies loaded (`require.cache`).
 * Exits 1 unless `fresh` and `added` have one copy on disk and in the process.
 *
 *   npm run build && node --import ./test/helpers/ts-register.mjs scripts/undici-dedupe.ts
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '..');
const NPM_FLAGS = ['--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error'];
const DISCORD_JS = 'discord.js@^14.27.0';

/** The bot: discord.js loaded first (its undici with it), then one call through the agent's client. */
const BOT = `
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const { Client, GatewayIntentBits } = require('discord.js');
new Client({ intents: [GatewayIntentBits.Guilds] });
const copies = () => Object.keys(require.cache).filter((path) => /[\\\\/]undici[\\\\/]index\\.js$/.test(path));
const withDiscord = copies();
const { startEmulator } = await import('listing-agent/emulator');
const { createListingClient } = await import('listing-agent/client');
const emu = await startEmulator();
const owner = emu.admin.createUser({ username: 'dedupe-owner' });
const token = emu.admin.createProject({ platform: 'discord', type: 'bot', owner_user_id: owner.id, name: 'Dedupe Bot' }).project_token;
const client = createListingClient({ projectToken: token, v1BaseUrl: emu.urls.v1 });
const project = await client.projects.get();
await client.close();
await emu.close();
const version = (path) => require(path.replace(/index\\.js$/, 'package.json')).version;
console.log(JSON.stringify({ called: project.name, withDiscord: withDiscord.map(version), afterCall: copies().map((path) => path.slice(process.cwd().length + 1) + ' ' + version(path)) }));
`;

interface Outcome {
  name: string;
  ls: string;
  onDisk: string[];
  loaded: string[];
  called: string;
  must: boolean;
}

async function npm(dir: string, args: string[]): Promise<string> {
  const { stdout } = await run('npm', args, { cwd: dir, maxBuffer: 16 * 1024 * 1024 });
  return stdout;
}

/** `npm ls undici` (it exits 1 on an invalid tree; the text still says what is there). */
async function ls(dir: string): Promise<string> {
  try {
    return await npm(dir, ['ls', 'undici', '--all']);
  } catch (error) {
    return (error as { stdout?: string }).stdout ?? String(error);
  }
}

async function inspect(name: string, dir: string, must: boolean): Promise<Outcome> {
  const nodes = JSON.parse(await npm(dir, ['query', '#undici'])) as Array<{ location: string; version: string }>;
  await writeFile(join(dir, 'bot.mjs'), BOT);
  const { stdout } = await run(process.execPath, ['bot.mjs'], { cwd: dir });
  const report = JSON.parse(stdout.trim().split('\n').at(-1)!) as { called: string; afterCall: string[] };
  return { name, ls: (await ls(dir)).trim(), onDisk: nodes.map((n) => `${n.location} ${n.version}`), loaded: report.afterCall, called: report.called, must };
}

async function bot(parent: string, name: string): Promise<string> {
  const dir = join(parent, name);
  await run('mkdir', ['-p', dir]);
  await writeFile(join(dir, 'package.json'), `${JSON.stringify({ name: `${name}-bot`, private: true, type: 'module' }, null, 2)}\n`);
  return dir;
}

async function main(): Promise<void> {
  const parent = await mkdtemp(join(tmpdir(), 'la-undici-dedupe-'));
  try {
    await run('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', parent], { cwd: ROOT });
    const tarball = join(parent, (await readdir(parent)).find((file) => file.endsWith('.tgz'))!);
    const outcomes: Outcome[] = [];

    const fresh = await bot(parent, 'fresh');
    await npm(fresh, ['install', ...NPM_FLAGS, DISCORD_JS, tarball]);
    outcomes.push(await inspect('fresh: npm install discord.js listing-agent', fresh, true));

    const added = await bot(parent, 'added');
    await npm(added, ['install', ...NPM_FLAGS, DISCORD_JS]);
    await npm(added, ['install', ...NPM_FLAGS, tarball]);
    outcomes.push(await inspect('added: a discord.js bot, then npm install listing-agent', added, true));

    const after = await bot(parent, 'djs-after');
    await npm(after, ['install', ...NPM_FLAGS, tarball]);
    await npm(after, ['install', ...NPM_FLAGS, DISCORD_JS]);
    outcomes.push(await inspect('djs-after: listing-agent first, then npm install discord.js', after, false));
    await npm(after, ['dedupe', ...NPM_FLAGS]);
    outcomes.push(await inspect('djs-after, then npm dedupe', after, false));

    let failed = false;
    for (const outcome of outcomes) {
      const one = outcome.onDisk.length === 1 && outcome.loaded.length === 1;
      if (outcome.must && !one) failed = true;
      console.log(`\n== ${outcome.name}: ${one ? 'one undici' : `${outcome.onDisk.length} on disk, ${outcome.loaded.length} loaded`}${outcome.must ? '' : ' (reported, not required)'}`);
      console.log(outcome.ls);
      console.log(`on disk: ${outcome.onDisk.join(', ')}`);
      console.log(`loaded by a bot after one call (${outcome.called}): ${outcome.loaded.join(', ')}`);
    }
    console.log(failed ? '\nFAIL: two undici copies where npm should have kept one' : '\nok: one undici in a fresh bot and in a bot that adds listing-agent');
    if (failed) process.exitCode = 1;
  } finally {
    await rm(parent, { recursive: true, force: true });
  }
}

await main();
