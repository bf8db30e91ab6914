import { mkdir, readFile, symlink } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * The node_modules of a bot project with the packed package extracted into
 * node_modules/listing-agent, laid out offline as npm lays it out for a discord.js 14 bot
 * (issue 25): discord.js at the top, the package's dependencies where it finds them, and one
 * undici, discord.js's (undici 6), at the top, which the package's range (`^6.27.0 || ^7...`)
 * accepts, so npm adds no undici 7 for it. The package's own node_modules holds its other
 * dependencies (links into this repository's node_modules) and no undici: it finds the bot's.
 * scripts/undici-dedupe.ts checks with the real npm that a bot ends up so.
 *
 * In this repository's node_modules discord.js and @discordjs/rest each have a nested undici 6
 * (ours, 7, is at the top); the link is discord.js's copy, the one discord.js loads at import.
 */
export async function linkBotModules(repo: string, bot: string, beside: string[] = ['discord.js']): Promise<void> {
  const top = join(bot, 'node_modules');
  const installed = join(top, 'listing-agent');
  for (const name of beside) await symlink(join(repo, 'node_modules', name), join(top, name), 'dir');
  const discordRequire = createRequire(join(repo, 'node_modules', 'discord.js', 'package.json'));
  await symlink(dirname(discordRequire.resolve('undici/package.json')), join(top, 'undici'), 'dir');
  const manifest = JSON.parse(await readFile(join(installed, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
  for (const name of Object.keys(manifest.dependencies ?? {})) {
    if (name === 'undici') continue;
    await mkdir(dirname(join(installed, 'node_modules', name)), { recursive: true });
    await symlink(join(repo, 'node_modules', name), join(installed, 'node_modules', name), 'dir');
  }
}
