import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll } from 'vitest';
import { linkBotModules } from '../helpers/bot-install.js';

/**
 * The package as a bot owner gets it: `npm pack`ed (dist/ built by `npm run check`), extracted into a
 * temporary bot project's node_modules/listing-agent. Offline: the package's own dependencies and
 * the bot's discord.js are symlinks to this repository's node_modules (what `npm ci` installed),
 * and undici is discord.js's copy at the bot's top level, as npm leaves it (test/helpers/bot-install.ts).
 */

const run = promisify(execFile);
const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

const temps: string[] = [];
afterAll(async () => {
  await Promise.all(temps.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

async function temp(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  temps.push(dir);
  return dir;
}

/**
 * The packed tarball, as `npm run check` packed it once for every file (test/setup/packed-tarball.ts,
 * the runtime matrix for every runtime): `LISTING_AGENT_PACKED`.
 */
export function packedTarball(): string {
  const given = process.env.LISTING_AGENT_PACKED;
  if (!given) {
    throw new Error('LISTING_AGENT_PACKED names no tarball: run this file with `npx vitest run --config vitest.check.config.ts` (it packs the package once), or set it to a tarball of `npm pack`');
  }
  return given;
}

/**
 * The packed package unpacked into a temporary folder (what `npm install` puts in
 * node_modules/listing-agent, before any dependency is added): its path, with a trailing slash.
 */
export async function unpackedPackage(): Promise<string> {
  const dir = await temp('listing-agent-unpacked-');
  await run('tar', ['xzf', packedTarball(), '-C', dir, '--strip-components=1']);
  return `${dir}/`;
}

/** A bot project: its folder and its entry file. */
export interface BotProject {
  dir: string;
  main: string;
}

/** What else a bot project holds (see {@link botProject}). */
export interface BotProjectOptions {
  /** Files copied out of the installed package: project path -> path in the package (`examples/discord-bot.ts`). */
  fromPackage?: Record<string, string>;
  /** Packages of this repository's node_modules the bot has beside discord.js (`typescript`, `@types`). */
  beside?: string[];
}

/**
 * A temporary bot project of `type` (`commonjs` or `module`) with the packed package installed and
 * discord.js beside it, running `bot` (a file of test/runtimes/bots/, copied as its main file;
 * none for a project that only runs the package's CLI or its own files, `fromPackage`).
 */
export async function botProject(type: 'commonjs' | 'module', bot?: string, options: BotProjectOptions = {}): Promise<BotProject> {
  const dir = await temp(`listing-agent-${type}-bot-`);
  const installed = join(dir, 'node_modules', 'listing-agent');
  await mkdir(installed, { recursive: true });
  await run('tar', ['xzf', packedTarball(), '-C', installed, '--strip-components=1']);
  // The bot's own discord.js, the package's dependencies, and one undici (discord.js's), as npm
  // installs them in a discord.js 14 bot.
  await linkBotModules(REPO, dir, ['discord.js', ...(options.beside ?? [])]);
  await writeFile(join(dir, 'package.json'), `${JSON.stringify({ name: `${type}-bot`, private: true, type, dependencies: { 'listing-agent': '*', 'discord.js': '*' } }, null, 2)}\n`);
  for (const [to, from] of Object.entries(options.fromPackage ?? {})) {
    await mkdir(dirname(join(dir, to)), { recursive: true });
    await copyFile(join(installed, from), join(dir, to));
  }
  const main = join(dir, bot ?? 'index.js');
  if (bot !== undefined) await copyFile(join(REPO, 'test', 'runtimes', 'bots', bot), main);
  return { dir, main };
}

/** The packed package's CLI inside `project` (what `npx listing-agent` runs there). */
export const installedCli = (project: BotProject) => join(project.dir, 'node_modules', 'listing-agent', 'dist', 'cli', 'main.js');
