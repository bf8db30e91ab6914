import { ConfigError } from '../../config/errors.js';
import type { ConfigSources } from '../../config/loader.js';
import { maskConfig } from '../../config/mask.js';
import { parseCommandArgs } from '../args.js';
import { loadRunnableConfig } from '../command-config.js';
import { EXIT, UsageError, type CliIo } from '../io.js';
import { runSubcommand } from '../subcommands.js';

export const CONFIG_HELP = `Usage: listing-agent config <subcommand> [options]

Work with the agent's configuration.

Subcommands:
  check   list every problem of the configuration, or print it with secrets masked

Run 'listing-agent config check --help' for its options.
`;

const CONFIG_CHECK_HELP = `Usage: listing-agent config check [--config FILE]

Load the configuration exactly as 'listing-agent run' does: .env from the working directory,
the JSON config file with \${VAR} replaced, then LISTING_AGENT_* variables over it; and check
it as 'run' does before it starts (stats with nothing to count, commands with no source, votes
that no hook receives, two servers on one address, ...).

When it is valid: prints the effective configuration as JSON on stdout (every secret shown as
********, defaults filled in) and the sources it was built from on stderr; exit code 0.
When it is not: prints every problem on stderr, one per line with its path, in the words
'run' refuses it with; exit code 1.

Options:
  -c, --config FILE   the JSON config file (default: $LISTING_AGENT_CONFIG; with neither, the
                      configuration comes from LISTING_AGENT_* variables alone)
  -h, --help          show this help
`;

function describeSources(sources: ConfigSources): string {
  const lines = [`  config file: ${sources.file ?? 'none (LISTING_AGENT_* variables and defaults only)'}`];
  lines.push(`  .env: ${sources.dotenv ?? 'none'}`);
  lines.push(`  environment: ${sources.env.length > 0 ? sources.env.join(', ') : 'none'}`);
  return lines.join('\n');
}

/** `listing-agent config check`. */
async function runConfigCheck(argv: string[], io: CliIo): Promise<number> {
  const { values } = parseCommandArgs('config check', argv, { config: { type: 'string', short: 'c' } });
  if (values.help) {
    io.stdout(CONFIG_CHECK_HELP);
    return EXIT.ok;
  }
  const file = values.config as string | undefined;
  if (file === '') throw new UsageError('--config needs a file path', 'config check');
  try {
    const loaded = await loadRunnableConfig({ ...(file === undefined ? {} : { file }), env: io.env, cwd: io.cwd });
    io.stdout(`${JSON.stringify(maskConfig(loaded.config), null, 2)}\n`);
    io.stderr(`listing-agent config check: the configuration is valid. Built from:\n${describeSources(loaded.sources)}\n`);
    return EXIT.ok;
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    if (error.reason !== 'invalid') {
      io.stderr(`listing-agent config check: ${error.summary}\n`);
      return EXIT.failure;
    }
    const count = error.problems.length;
    const lines = error.problems.map((p) => `${p.path}: ${p.message}`);
    io.stderr(`listing-agent config check: ${count} ${count === 1 ? 'problem' : 'problems'}:\n${lines.join('\n')}\n`);
    return EXIT.failure;
  }
}

/** `listing-agent config <subcommand>`. */
export function runConfigCommand(argv: string[], io: CliIo): Promise<number> {
  return runSubcommand(argv, io, { command: 'config', help: CONFIG_HELP, subcommands: { check: runConfigCheck } });
}
