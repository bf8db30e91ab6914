import { createRequire } from 'node:module';
import { EXIT, UsageError, type CliIo } from './io.js';

const require = createRequire(import.meta.url);
const { version } = require('../../package.json') as { version: string };

interface Command {
  summary: string;
  /** Loads the command's module: only the command that runs is loaded (start-up time and memory). */
  load(): Promise<{ help: string; run(argv: string[], io: CliIo): Promise<number> }>;
}

// Each command's module (and what it imports: the emulator, the demo, the agent) is loaded only
// when that command runs, so `run` does not pay for the emulator nor `emulator` for the agent.
const COMMANDS: Record<string, Command> = {
  demo: {
    summary: 'run the agent against the embedded emulator and a simulated bot',
    load: async () => import('./commands/demo.js').then((m) => ({ help: m.DEMO_HELP, run: m.runDemoCommand })),
  },
  run: {
    summary: 'run the agent as a daemon (sidecar, systemd service)',
    load: async () => import('./commands/run.js').then((m) => ({ help: m.RUN_HELP, run: m.runRunCommand })),
  },
  emulator: {
    summary: 'start a local emulator of the listing service',
    load: async () => import('./commands/emulator.js').then((m) => ({ help: m.EMULATOR_HELP, run: m.runEmulatorCommand })),
  },
  commands: {
    summary: 'show or sync the slash commands the listing shows',
    load: async () => import('./commands/commands.js').then((m) => ({ help: m.COMMANDS_HELP, run: m.runCommandsCommand })),
  },
  config: {
    summary: 'check the configuration: every problem, or the effective config masked',
    load: async () => import('./commands/config-check.js').then((m) => ({ help: m.CONFIG_HELP, run: m.runConfigCommand })),
  },
  stats: {
    summary: 'post the current counts once (or show them with --dry-run)',
    load: async () => import('./commands/stats.js').then((m) => ({ help: m.STATS_HELP, run: m.runStatsCommand })),
  },
  votes: {
    summary: 'list votes, check a voter, list and replay failed rewards',
    load: async () => import('./commands/votes.js').then((m) => ({ help: m.VOTES_HELP, run: m.runVotesCommand })),
  },
  doctor: {
    summary: 'check the setup: config, token, clock, sources, webhooks, state, Redis',
    load: async () => import('./commands/doctor.js').then((m) => ({ help: m.DOCTOR_HELP, run: m.runDoctorCommand })),
  },
  webhooks: {
    summary: 'run the webhook receiver alone, rotate a secret, send a test delivery',
    load: async () => import('./commands/webhooks.js').then((m) => ({ help: m.WEBHOOKS_HELP, run: m.runWebhooksCommand })),
  },
};

/**
 * The top-level help. Exported for `npm run docs` (scripts/docs/cli.ts reads it from dist/, which
 * knip cannot follow: hence the tag).
 * @public
 */
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
      io.stdout((await command.load()).help);
      return EXIT.ok;
    }
    if (first.startsWith('-')) throw new UsageError(`unknown option '${first}' (options go after the command)`);
    const command = COMMANDS[first];
    if (!command) {
      throw new UsageError(`unknown command '${first}'; commands: ${Object.keys(COMMANDS).join(', ')}`);
    }
    return await (await command.load()).run(rest, io);
  } catch (error) {
    if (error instanceof UsageError) {
      const hint = error.command ? `listing-agent ${error.command} --help` : 'listing-agent --help';
      io.stderr(`listing-agent: ${error.message}\nSee '${hint}'.\n`);
      return EXIT.usage;
    }
    throw error;
  }
}
