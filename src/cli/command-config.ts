import { daemonProblems } from '../agent/start-problems.js';
import { ConfigError, invalidConfigSummary } from '../config/errors.js';
import { loadConfig, type LoadConfigOptions, type LoadedConfig } from '../config/loader.js';
import { EXIT, type CliIo } from './io.js';

/** How {@link loadCommandConfig} words a configuration it refuses. */
export interface RefusalWording {
  /** Before the summary (`refusing to start: `). Default: nothing. */
  lead?: string;
  /** A line after the problems (where to look next). Default: none. */
  advice?: string;
  /** Also refuse what `listing-agent run` would refuse beyond the schema ({@link loadRunnableConfig}). Default false. */
  runnable?: boolean;
}

/**
 * Loads the configuration as `listing-agent run` does and checks it as `run` would before
 * anything starts (start-problems.ts: stats with nothing to count, commands with no source, votes
 * that no hook receives, ...). Throws one `ConfigError` (reason `invalid`): the schema's problems,
 * or, for a configuration the schema accepts, every one `run` would refuse. `run`, `config check`
 * and `doctor` load with it, so the three say the same thing in the same words.
 */
export async function loadRunnableConfig(options: LoadConfigOptions): Promise<LoadedConfig> {
  const loaded = await loadConfig(options);
  const problems = daemonProblems(loaded.config);
  if (problems.length > 0) throw new ConfigError('invalid', invalidConfigSummary(problems), problems);
  return loaded;
}

/**
 * Loads the configuration for a CLI command (`file`, else the default file and the environment).
 * A configuration that cannot be used is told on stderr, `listing-agent <command>: <summary>` then
 * each problem on its own line, and the answer is the exit code 78 instead; any other error is thrown.
 */
export async function loadCommandConfig(
  io: Pick<CliIo, 'env' | 'cwd' | 'stderr'>,
  command: string,
  file: string | undefined,
  wording: RefusalWording = {},
): Promise<LoadedConfig | number> {
  try {
    const options = { ...(file === undefined ? {} : { file }), env: io.env, cwd: io.cwd };
    return await (wording.runnable === true ? loadRunnableConfig(options) : loadConfig(options));
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    const lines = error.reason === 'invalid' ? error.problems.map((p) => `  ${p.path}: ${p.message}`) : [];
    io.stderr(`listing-agent ${command}: ${wording.lead ?? ''}${error.summary}\n${lines.length > 0 ? `${lines.join('\n')}\n` : ''}`);
    if (wording.advice !== undefined) io.stderr(`${wording.advice}\n`);
    return EXIT.config;
  }
}
