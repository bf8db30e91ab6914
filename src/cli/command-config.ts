import { ConfigError } from '../config/errors.js';
import { loadConfig, type LoadedConfig } from '../config/loader.js';
import { EXIT, type CliIo } from './io.js';

/** How {@link loadCommandConfig} words a configuration it refuses. */
export interface RefusalWording {
  /** Before the summary (`refusing to start: `). Default: nothing. */
  lead?: string;
  /** A line after the problems (where to look next). Default: none. */
  advice?: string;
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
    return await loadConfig({ ...(file === undefined ? {} : { file }), env: io.env, cwd: io.cwd });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    const lines = error.reason === 'invalid' ? error.problems.map((p) => `  ${p.path}: ${p.message}`) : [];
    io.stderr(`listing-agent ${command}: ${wording.lead ?? ''}${error.summary}\n${lines.length > 0 ? `${lines.join('\n')}\n` : ''}`);
    if (wording.advice !== undefined) io.stderr(`${wording.advice}\n`);
    return EXIT.config;
  }
}
