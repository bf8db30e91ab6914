import { createRequire } from 'node:module';
import { COMMANDS_HELP, runCommandsCommand } from './commands/commands.js';
import { CONFIG_HELP, runConfigCommand } from './commands/config-check.js';
import { DEMO_HELP, runDemoCommand } from './commands/demo.js';
import { RUN_HELP, runRunCommand } from './commands/run.js';
import { EMULATOR_HELP, runEmulatorCommand } from './commands/emulator.js';
import { STATS_HELP, runStatsCommand } from './commands/stats.js';
import { VOTES_HELP, runVotesCommand } from './commands/votes.js';
import { WEBHOOKS_HELP, runWebhooksCommand } from './commands/webhooks.js';
import { EXIT, UsageError, type CliIo } from './io.js';

const require = createRequire(import.meta.url);
const { version } = require('../../package.json') as { version: string };

interface Command {
  summary: string;
  help: string;
  run(argv: string[], io: CliIo): Promise<number>;
}

const COMMANDS: Record<string, Command> = {
  demo: { summary: 'run the agent against the embedded emulator and a simulated bot', help: DEMO_HELP, run: runDemoCommand },
  run: { summary: 'run the agent as a daemon (sidecar, systemd service)', help: RUN_HELP, run: runRunCommand },
  emulator: { summary: 'start a local emulator of the listing service', help: EMULATOR_HELP, run: runEmulatorCommand },
  commands: { summary: 'show or sync the slash commands the listing shows', help: COMMANDS_HELP, run: runCommandsCommand },
  config: { summary: 'check the configuration: every problem, or the effective config masked', help: CONFIG_HELP, run: runConfigCommand },
  stats: { summary: 'post the current counts once (or show them with --dry-run)', help: STATS_HELP, run: runStatsCommand },
  votes: { summary: 'list votes, check a voter, list and replay failed rewards', help: VOTES_HELP, run: runVotesCommand },
  webhooks: { summary: 'run the webhook receiver alone, rotate a secret, send a test delivery', help: WEBHOOKS_HELP, run: runWebhooksCommand },
};

/** The top-level help. */
export function mainHelp(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((name) => name.length));
  const rows = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width)}   ${c.summary}`);
  return `Usage: listing-agent <command> [options]

Keeps a bot's listing true and pays its voters.

Commands:
${rows.join('\n')}
  ${'help'.padEnd(width)}   show help for a command

Options:
  -h, --help      show this help
  -v, --version   print the version

Run 'listing-agent <command> --help' for a command's options.
`;
}

/** Runs the CLI with `argv` (without node and the script); resolves with the exit code. */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const [first, ...rest] = argv;
  try {
    if (first === undefined || first === '-h' || first === '--help') {
      io.stdout(mainHelp());
      return first === undefined ? EXIT.usage : EXIT.ok;
    }
    if (first === '-v' || first === '--version') {
      io.stdout(`${version}\n`);
      return EXIT.ok;
    }
    if (first === 'help') {
      const topic = rest[0];
      if (topic === undefined) {
        io.stdout(mainHelp());
        return EXIT.ok;
      }
      const command = COMMANDS[topic];
      if (!command) throw new UsageError(`unknown command '${topic}'`);
      io.stdout(command.help);
      return EXIT.ok;
    }
    if (first.startsWith('-')) throw new UsageError(`unknown option '${first}' (options go after the command)`);
    const command = COMMANDS[first];
    if (!command) {
      throw new UsageError(`unknown command '${first}'; commands: ${Object.keys(COMMANDS).join(', ')}`);
    }
    return await command.run(rest, io);
  } catch (error) {
    if (error instanceof UsageError) {
      const hint = error.command ? `listing-agent ${error.command} --help` : 'listing-agent --help';
      io.stderr(`listing-agent: ${error.message}\nSee '${hint}'.\n`);
      return EXIT.usage;
    }
    throw error;
  }
}
