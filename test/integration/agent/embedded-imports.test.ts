import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { setupBot, startTestEmulator } from '../../helpers/emulator.js';
import { startFakeDiscord } from '../../helpers/fake-discord/index.js';

/**
 * What an embedded agent imports as ES modules inside a discord.js bot (issue 33: its heap inside
 * a bot). When an ES module imports a CommonJS package, Node reads that package's source, and the
 * source of every package it re-exports, to list the export names, and keeps those texts for the
 * process's life: for discord.js, which re-exports @discordjs/builders, rest, ws and more, that is
 * a copy of their sources inside the bot. The agent reads what it needs of the bot's discord.js
 * with `require()`, which returns the copy the bot has loaded. The bot is
 * test/helpers/three-lines-bot.mjs on the built package, under test/helpers/esm-imports.mjs.
 */

const BOT = fileURLToPath(new URL('../../helpers/three-lines-bot.mjs', import.meta.url));
const ESM_IMPORTS = fileURLToPath(new URL('../../helpers/esm-imports.mjs', import.meta.url));
const DIST = new URL('../../../dist/', import.meta.url).href;

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

describe('an agent posting a discord.js bot\'s counts', () => {
  it('imports nothing of discord.js as an ES module (after its first post)', { timeout: 30_000 }, async () => {
    const fake = await startFakeDiscord({ shardCount: 1, guilds: 3 });
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const dir = await mkdtemp(join(tmpdir(), 'la-embedded-imports-'));
    dirs.push(dir);
    const list = join(dir, 'imports.txt');
    const child = spawn(process.execPath, ['--import', ESM_IMPORTS, BOT], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        PATH: process.env.PATH ?? '',
        ESM_IMPORTS_FILE: list,
        LISTING_TOKEN: fx.projectToken,
        LISTING_V1: emu.urls.v1,
        LISTING_V0: emu.urls.v0,
        STATE_DIR: join(dir, 'state'),
        DISCORD_API: fake.restUrl,
        DISCORD_TOKEN: fake.token,
      },
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const exited = new Promise((resolve) => child.once('exit', resolve));
    const deadline = Date.now() + 20_000;
    const waitFor = async (done: () => boolean, what: string) => {
      while (!done()) {
        if (child.exitCode !== null || Date.now() > deadline) throw new Error(`${what}; the bot said:\n${output.slice(-2_000)}`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    };
    try {
      await waitFor(() => output.split('\n').includes('posted'), 'the agent did not post');
      child.kill('SIGUSR2');
      await waitFor(() => existsSync(list), 'no list of imports');
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
    const imports = (await readFile(list, 'utf8')).split('\n').filter((line) => line !== '');
    const fromPackage = imports.filter((line) => line.startsWith(DIST));
    // The control: the listing sees the package's own imports, and the bot's import of discord.js.
    expect(fromPackage.length).toBeGreaterThan(10);
    expect(imports.some((line) => line.endsWith(' discord.js') && !line.startsWith(DIST))).toBe(true);
    expect(fromPackage.filter((line) => / (discord\.js|@discordjs\/[^ ]+)$/.test(line))).toEqual([]);
  });
});
