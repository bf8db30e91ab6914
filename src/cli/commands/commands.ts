import { createListingClient } from '../../api/client.js';
import { commandsSourceFor } from '../../commands/configured-source.js';
import { formatDiff } from '../../commands/diff.js';
import { planCommandSync, syncCommands } from '../../commands/sync.js';
import { silentLogger } from '../../log/agent-logger.js';
import { parseCommandArgs } from '../args.js';
import { loadCommandConfig } from '../command-config.js';
import { EXIT, type CliIo } from '../io.js';
import { runSubcommand } from '../subcommands.js';
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

async function runDiff(argv: string[], io: CliIo): Promise<number> {
  const { values } = parseCommandArgs('commands diff', argv, { config: { type: 'string', short: 'c' } });
  if (values.help) {
    io.stdout(COMMANDS_HELP);
    return EXIT.ok;
  }
  const loaded = await loadCommandConfig(io, 'commands diff', values.config as string | undefined);
  if (typeof loaded === 'number') return loaded;
  const { config } = loaded;
  const source = commandsSourceFor(config, { cwd: io.cwd, mode: 'daemon' });
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
  const loaded = await loadCommandConfig(io, 'commands sync', values.config as string | undefined);
  if (typeof loaded === 'number') return loaded;
  const { config } = loaded;
  const source = commandsSourceFor(config, { cwd: io.cwd, mode: 'daemon' });
  // File: the store takes the state directory's lock. Redis: the store without the leader's fence.
  await using state = cliState(config, io);
  await using client = createListingClient({
    projectToken: config.service.token,
    v1BaseUrl: config.service.v1,
    v0BaseUrl: config.service.v0,
  });
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
export function runCommandsCommand(argv: string[], io: CliIo): Promise<number> {
  // A source, a rule or the service said no: one line that says what, never a stack trace.
  return runSubcommand(argv, io, {
    command: 'commands',
    help: COMMANDS_HELP,
    subcommands: { diff: runDiff, sync: runSync },
    oneLineErrors: true,
  });
}
