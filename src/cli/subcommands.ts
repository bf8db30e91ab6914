import { ListingAgentError, ValidationError } from '../errors.js';
import { printable } from '../contract/printable.js';
import { EXIT, UsageError, type CliIo } from './io.js';

/** A command's subcommands by name, each run with the arguments after its name. */
type Subcommands = Readonly<Record<string, (argv: string[], io: CliIo) => Promise<number>>>;

/** What {@link runSubcommand} dispatches. */
export interface SubcommandTable {
  /** The command (`votes`), for messages and its `--help`. */
  command: string;
  /** The command's help, printed for `-h`, `--help`, and (with exit 2) no subcommand at all. */
  help: string;
  subcommands: Subcommands;
  /**
   * Turn a `ListingAgentError` a subcommand throws (the service, the state, a hook said no) into
   * one line `listing-agent <command> <sub>: <message>` on stderr, exit 78 for a configuration
   * problem and 1 otherwise, never a stack trace. Default false: it propagates.
   */
  oneLineErrors?: boolean;
}

/**
 * `listing-agent <command> <subcommand> [options]`: the help, the dispatch, and a `UsageError`
 * for an unknown subcommand (or an option before the subcommand).
 */
export async function runSubcommand(argv: string[], io: CliIo, table: SubcommandTable): Promise<number> {
  const { command, subcommands } = table;
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === '-h' || sub === '--help') {
    io.stdout(table.help);
    return sub === undefined ? EXIT.usage : EXIT.ok;
  }
  const run = Object.hasOwn(subcommands, sub) ? subcommands[sub] : undefined;
  if (!run) {
    if (sub.startsWith('-')) throw new UsageError(`unknown option '${sub}' (options go after the subcommand)`, command);
    throw new UsageError(`unknown subcommand '${sub}'; subcommands: ${Object.keys(subcommands).join(', ')}`, command);
  }
  if (table.oneLineErrors !== true) return run(rest, io);
  try {
    return await run(rest, io);
  } catch (error) {
    if (error instanceof ListingAgentError) {
      // The message may quote the service (a problem's detail): printable, on one line.
      io.stderr(`listing-agent ${command} ${sub}: ${printable(error.message)}\n`);
      return error instanceof ValidationError && error.subject === 'config' ? EXIT.config : EXIT.failure;
    }
    throw error;
  }
}
