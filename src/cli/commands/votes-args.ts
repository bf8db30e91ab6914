import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { LoadedConfig } from '../../config/loader.js';
import type { ListingAgentConfig } from '../../config/schema.js';
import { loadCommandConfig } from '../command-config.js';
import { UsageError, type CliIo } from '../io.js';

/** The option table of a `votes` subcommand. */
export type VotesOptions = NonNullable<ParseArgsConfig['options']>;
/** Parsed option values. */
export type VotesValues = Record<string, string | boolean | (string | boolean)[] | undefined>;

const CONFIG_OPTION: VotesOptions = { config: { type: 'string', short: 'c' }, help: { type: 'boolean', short: 'h' } };

/** Parses `votes <sub>`'s arguments (with `--config` and `--help`); usage errors name the subcommand. */
export function parseVotesArgs(
  sub: string,
  argv: string[],
  options: VotesOptions,
  positionals = 0,
): { values: VotesValues; positionals: string[] } {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: { ...CONFIG_OPTION, ...options }, strict: true, allowPositionals: positionals > 0 });
  } catch (error) {
    throw new UsageError((error as Error).message.replace(/\. To specify a positional argument.*$/s, ''), `votes ${sub}`);
  }
  if (parsed.positionals.length > positionals)
    throw new UsageError(`unexpected argument '${parsed.positionals[positionals]}'`, `votes ${sub}`);
  return parsed;
}

/** The loaded config of `--config` (or the environment), with its sources; a number is the exit code of a config that does not load. */
export async function loadVotesConfigAndSources(io: CliIo, sub: string, values: VotesValues): Promise<LoadedConfig | number> {
  const file = values.config as string | undefined;
  if (file === '') throw new UsageError('--config needs a file path', `votes ${sub}`);
  return loadCommandConfig(io, `votes ${sub}`, file);
}

/** The config of `--config` (or the environment); a number is the exit code of a config that does not load. */
export async function loadVotesConfig(io: CliIo, sub: string, values: VotesValues): Promise<ListingAgentConfig | number> {
  const loaded = await loadVotesConfigAndSources(io, sub, values);
  return typeof loaded === 'number' ? loaded : loaded.config;
}
