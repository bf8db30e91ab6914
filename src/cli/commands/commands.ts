import { createListingClient } from '../../api/client.js';
import { commandsSourceFor } from '../../commands/configured-source.js';
import { formatDiff } from '../../commands/diff.js';
import { planCommandSync, syncCommands } from '../../commands/sync.js';
import { ConfigError } from '../../config/errors.js';
import { loadConfig, type LoadedConfig } from '../../config/loader.js';
import { ListingAgentError } from '../../errors.js';
import { silentLogger } from '../../log/agent-logger.js';
import { parseCommandArgs } from '../args.js';
import { EXIT, UsageError, type CliIo } from '../io.js';
import { cliState } from '../state.js';

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
(commands.file). The last synced set is read from the state directory, or from Redis with
state.redis (Redis must answer within 5 s).

sync takes the state directory's lock, so run it while the daemon is stopped. With state.redis
it takes no lock and runs beside the agents: the command hash is written to Redis directly,
without the leader's fence that guards the agents' own writes of it, because a sync from the
CLI is an operator's explicit action; the leader's next sync then finds the commands unchanged.
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
  // The last synced set, read without the state directory's lock (a running agent holds it).
  await using state = cliState(config, io);
  const plan = await planCommandSync(source, await state.reader());
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
  // File: the store takes the state directory's lock. Redis: the store without the leader's fence.
  await using state = cliState(config, io);
  await using client = createListingClient({ projectToken: config.service.token, v1BaseUrl: config.service.v1, v0BaseUrl: config.service.v0 });
  const store = await state.store();
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
