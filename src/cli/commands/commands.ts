import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { createListingClient } from '../../api/client.js';
import { commandsSourceFor } from '../../commands/configured-source.js';
import { formatDiff } from '../../commands/diff.js';
import { planCommandSync, syncCommands } from '../../commands/sync.js';
import { ConfigError } from '../../config/errors.js';
import { loadConfig, type LoadedConfig } from '../../config/loader.js';
import { ListingAgentError } from '../../errors.js';
import { silentLogger } from '../../agent/logger.js';
import { parseStateDocument } from '../../store/document.js';
import { createFileStore } from '../../store/file.js';
import { parseCommandArgs } from '../args.js';
import { EXIT, UsageError, type CliIo } from '../io.js';

export const COMMANDS_HELP = `Usage: listing-agent commands <subcommand> [options]

Keep the listing's slash commands equal to the bot's.

Subcommands:
  diff    show what a sync would change against the last synced set
  sync    sync now (only when the commands changed, unless --force)

Options (both):
  -c, --config FILE   the JSON config (default: LISTING_AGENT_CONFIG, else LISTING_AGENT_* variables)
  --force             (sync) send the commands even when they did not change
  -h, --help          show this help

The commands come from commands.source: discord (Discord's API with discord.token) or file
(commands.file). The last synced set is read from the state directory.
`;

async function load(io: CliIo, file: string | undefined, what: string): Promise<LoadedConfig | number> {
  try {
    return await loadConfig({ ...(file === undefined ? {} : { file }), env: io.env, cwd: io.cwd });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    const lines = error.reason === 'invalid' ? error.problems.map((p) => `  ${p.path}: ${p.message}`) : [];
    io.stderr(`listing-agent commands ${what}: ${error.summary}\n${lines.length > 0 ? `${lines.join('\n')}\n` : ''}`);
    return EXIT.config;
  }
}

/** The last synced set, read without taking the state directory's lock (a running agent holds it). */
function readOnlyState(directory: string) {
  return {
    async get<T>(key: string): Promise<T | undefined> {
      let text: string;
      try {
        text = await readFile(join(directory, 'state.json'), 'utf8');
      } catch {
        return undefined;
      }
      const parsed = parseStateDocument(text);
      const raw = parsed.ok ? parsed.entries.get(key) : undefined;
      return raw === undefined ? undefined : (JSON.parse(raw) as T);
    },
  };
}

async function runDiff(argv: string[], io: CliIo): Promise<number> {
  const { values } = parseCommandArgs('commands diff', argv, { config: { type: 'string', short: 'c' } });
  if (values.help) {
    io.stdout(COMMANDS_HELP);
    return EXIT.ok;
  }
  const loaded = await load(io, values.config as string | undefined, 'diff');
  if (typeof loaded === 'number') return loaded;
  const { config } = loaded;
  const source = commandsSourceFor(config, { cwd: io.cwd });
  const plan = await planCommandSync(source, readOnlyState(resolve(io.cwd, config.state.directory)));
  if (plan.last === undefined) io.stdout(`No sync recorded yet: a sync would send all ${plan.commands.length} commands.\n`);
  else if (plan.unchanged) io.stdout(`No change since the last sync (${plan.commands.length} commands, synced ${plan.last.syncedAt}).\n`);
  else io.stdout(`Changes since the last sync (${plan.last.syncedAt}):\n`);
  for (const line of formatDiff(plan.diff)) io.stdout(`  ${line}\n`);
  return EXIT.ok;
}

async function runSync(argv: string[], io: CliIo): Promise<number> {
  const { values } = parseCommandArgs('commands sync', argv, { config: { type: 'string', short: 'c' }, force: { type: 'boolean' } });
  if (values.help) {
    io.stdout(COMMANDS_HELP);
    return EXIT.ok;
  }
  const loaded = await load(io, values.config as string | undefined, 'sync');
  if (typeof loaded === 'number') return loaded;
  const { config } = loaded;
  const source = commandsSourceFor(config, { cwd: io.cwd });
  const store = createFileStore({ directory: resolve(io.cwd, config.state.directory), owner: io.owner, isProcessAlive: io.isProcessAlive });
  await using client = createListingClient({ projectToken: config.service.token, v1BaseUrl: config.service.v1, v0BaseUrl: config.service.v0 });
  await store.open();
  try {
    const result = await syncCommands(
      { source, client, store, logger: silentLogger, now: Date.now },
      { reason: 'demand', force: values.force === true },
    );
    io.stdout(
      result.skipped
        ? `Unchanged since the last sync: nothing sent (${result.count} commands). Use --force to send them anyway.\n`
        : `Synced ${result.count} commands to the listing.\n`,
    );
    for (const line of formatDiff(result.diff)) io.stdout(`  ${line}\n`);
    return EXIT.ok;
  } finally {
    await store.close();
  }
}

/** `listing-agent commands <diff|sync>`. */
export async function runCommandsCommand(argv: string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === '-h' || sub === '--help') {
    io.stdout(COMMANDS_HELP);
    return sub === undefined ? EXIT.usage : EXIT.ok;
  }
  try {
    if (sub === 'diff') return await runDiff(rest, io);
    if (sub === 'sync') return await runSync(rest, io);
  } catch (error) {
    // A source, a rule or the service said no: one line that says what, never a stack trace.
    if (error instanceof ListingAgentError && !(error instanceof UsageError)) {
      io.stderr(`listing-agent commands ${sub}: ${error.message}\n`);
      return error.code === 'validation' && (error as { subject?: string }).subject === 'config' ? EXIT.config : EXIT.failure;
    }
    throw error;
  }
  if (sub.startsWith('-')) throw new UsageError(`unknown option '${sub}' (options go after the subcommand)`, 'commands');
  throw new UsageError(`unknown subcommand '${sub}'; subcommands: diff, sync`, 'commands');
}
