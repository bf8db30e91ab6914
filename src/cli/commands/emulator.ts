import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { startEmulator, type EmulatorWithContext } from '../../emulator/index.js';
import { DEFAULT_SEED, seedSchema, type EmulatorSeed } from '../../emulator/seed.js';
import { parseCommandArgs, parsePort } from '../args.js';
import { EXIT, type CliIo } from '../io.js';
import { keepProcessAlive } from '../keep-alive.js';
import { errorMessage } from '../../errors.js';

/** Default port of `listing-agent emulator`. */
const DEFAULT_EMULATOR_PORT = 4545;

export const EMULATOR_HELP = `Usage: listing-agent emulator [options]

Start a local emulator of the listing service (v1, v0, OAuth, signed webhooks) with in-memory state.

Options:
  --port N                 port to listen on (default ${DEFAULT_EMULATOR_PORT}; 0 picks a free one)
  --host H                 address to listen on (default 127.0.0.1)
  --seed FILE              JSON fixture of users, projects, votes, applications, integrations
                           (default: one owner, one Discord bot, one OAuth application)
  --allow-http-loopback    also accept http://127.0.0.1 and http://localhost webhook URLs
  --discord                also start a fake Discord (REST and gateway) for the seeded bot, and print
                           the settings a bot needs to run against both (docs/testing.md)
  --shards N               with --discord: the fake Discord's shard count (default 1)
  --guilds N               with --discord: the bot's guilds at the start (default 3)
  --json                   print the URLs and credentials as one JSON line
  -h, --help               show this help

The admin API under /_emulator drives it (see the README). Ctrl-C stops it.
`;

async function loadSeed(file: string, io: CliIo): Promise<EmulatorSeed | { problem: string }> {
  const path = resolve(io.cwd, file);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    return { problem: `cannot read the seed file ${path}: ${(error as NodeJS.ErrnoException).code ?? errorMessage(error)}` };
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    return { problem: `the seed file ${path} is not valid JSON: ${errorMessage(error)}` };
  }
  const parsed = seedSchema.safeParse(data);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  ${issue.path.join('.') || '(root)'}: ${issue.message}`);
    return { problem: `the seed file ${path} is invalid:\n${lines.join('\n')}` };
  }
  return data as EmulatorSeed;
}

/** What to do about a listen that failed with `code` (a system error code), in one clause. */
export function emulatorListenHint(code: string | undefined, host: string, port: number, message: string): string {
  if (code === 'EADDRINUSE') return `port ${port} is in use: pick another with --port (0 picks a free one)`;
  if (code === 'EADDRNOTAVAIL') return `${host} is not an address of this machine: use --host 127.0.0.1`;
  if (code === 'EACCES') return `not allowed to listen on port ${port}: use a port above 1023`;
  return message;
}

/** The URLs and seeded credentials of a running emulator, as `--json` prints them. */
function emulatorSummary({ urls, context }: EmulatorWithContext) {
  const projects = [...context.state.projects.values()].map((project) => ({
    id: project.id,
    name: project.name,
    platform: project.platform,
    type: project.type,
    platform_id: project.platform_id,
    project_token: context.state.projectTokens.get(project.id) ?? '',
  }));
  const applications = [...context.state.applications.values()].map((a) => ({
    client_id: a.client_id,
    client_secret: a.client_secret,
    redirect_uris: a.redirect_uris,
  }));
  const users = [...context.state.users.values()].map((u) => ({ id: u.id, username: u.username, platform_id: u.platform_id }));
  return { v1: urls.v1, v0: urls.v0, auth: `${urls.auth}/oauth2/authorize`, admin: urls.admin, users, projects, applications };
}

/** The summary for a person: the URLs, then every seeded credential. */
function describeSummary(summary: ReturnType<typeof emulatorSummary>): string {
  const lines = [
    'listing-service emulator is running (in-memory; every credential below is made up for this emulator)',
    `  v1 base URL   ${summary.v1}`,
    `  v0 base URL   ${summary.v0}`,
    `  auth URL      ${summary.auth}`,
    `  admin API     ${summary.admin}`,
    '',
    'Seeded credentials:',
    ...summary.users.map((u) => `  user ${u.username}: id ${u.id}, Discord ID ${u.platform_id}`),
    ...summary.projects.map(
      (p) =>
        `  project ${p.name} (${p.platform} ${p.type}): id ${p.id}, platform_id ${p.platform_id}\n    project token ${p.project_token}`,
    ),
    ...summary.applications.map(
      (a) => `  application ${a.client_id}: client secret ${a.client_secret}, redirect URIs ${a.redirect_uris.join(' ')}`,
    ),
    '',
    'Ctrl-C stops it.',
  ];
  return `${lines.join('\n')}\n`;
}

/** A count option of `--discord` (`--shards`, `--guilds`): a whole number from `min`, or a problem naming it. */
function countOption(name: string, given: unknown, fallback: number, min: number): number | string {
  if (given === undefined) return fallback;
  const value = Number(given);
  if (Number.isInteger(value) && value >= min && value <= 10_000) return value;
  return `--${name} must be a whole number from ${min} to 10000 (got ${String(given)})`;
}

/**
 * `--discord`: the fake Discord for the seed's first Discord bot, loaded only now. Null (after a
 * line on stderr) when an option is wrong or the seed has no Discord bot to play.
 */
async function startDiscord(summary: ReturnType<typeof emulatorSummary>, values: Record<string, unknown>, io: CliIo) {
  const shards = countOption('shards', values.shards, 1, 1);
  const guilds = countOption('guilds', values.guilds, 3, 0);
  const bot = summary.projects.find((p) => p.platform === 'discord' && p.type === 'bot');
  if (typeof shards === 'string' || typeof guilds === 'string' || !bot) {
    const noBot = 'the seed has no Discord bot project for the fake Discord to play: add one (platform discord, type bot)';
    io.stderr(`listing-agent emulator: ${typeof shards === 'string' ? shards : typeof guilds === 'string' ? guilds : noBot}\n`);
    return null;
  }
  const { startEmulatorDiscord, describeDiscord } = await import('./emulator-discord.js');
  const listing = { platformId: bot.platform_id, projectToken: bot.project_token, v1: summary.v1, v0: summary.v0 };
  const started = await startEmulatorDiscord(listing, shards, guilds);
  return { summary: started.summary, text: describeDiscord(started.summary), close: () => started.discord.close() };
}

/** `listing-agent emulator`: runs until a stop is requested. */
export async function runEmulatorCommand(argv: string[], io: CliIo): Promise<number> {
  const { values } = parseCommandArgs('emulator', argv, {
    port: { type: 'string' },
    host: { type: 'string' },
    seed: { type: 'string' },
    'allow-http-loopback': { type: 'boolean' },
    json: { type: 'boolean' },
    discord: { type: 'boolean' },
    shards: { type: 'string' },
    guilds: { type: 'string' },
  });
  if (values.help) {
    io.stdout(EMULATOR_HELP);
    return EXIT.ok;
  }
  const port = parsePort('emulator', values.port as string | undefined, DEFAULT_EMULATOR_PORT);
  const host = (values.host as string | undefined) ?? '127.0.0.1';
  let seed: EmulatorSeed = DEFAULT_SEED;
  if (typeof values.seed === 'string') {
    const loaded = await loadSeed(values.seed, io);
    if ('problem' in loaded) {
      io.stderr(`listing-agent emulator: ${loaded.problem}\n`);
      return EXIT.config;
    }
    seed = loaded;
  }

  let emulator: EmulatorWithContext;
  try {
    emulator = await startEmulator({ port, host, seed, settings: { allowHttpLoopback: values['allow-http-loopback'] === true } });
  } catch (error) {
    const hint = emulatorListenHint((error as NodeJS.ErrnoException).code, host, port, errorMessage(error));
    io.stderr(`listing-agent emulator: cannot listen on ${host}:${port}: ${hint}\n`);
    return EXIT.failure;
  }
  const summary = emulatorSummary(emulator);
  const discord = values.discord === true ? await startDiscord(summary, values, io) : undefined;
  if (discord === null) {
    await emulator.close();
    return EXIT.config;
  }
  const json = () => `${JSON.stringify({ ...summary, ...(discord ? { discord: discord.summary } : {}) })}\n`;
  const printed = values.json ? json() : describeSummary(summary);
  io.stdout(discord && !values.json ? `${printed}\n${discord.text}` : printed);

  // Up until told to stop, whatever socket or timer is left (see keepProcessAlive).
  const release = keepProcessAlive();
  const signal = await io.stopRequested;
  await Promise.all([emulator.close(), discord?.close()]).finally(release);
  if (!values.json) io.stdout(`emulator stopped (${signal})\n`);
  return EXIT.ok;
}
