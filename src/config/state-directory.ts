import { resolve } from 'node:path';
import type { ListingAgentConfig } from './schema.js';

/** The state directory of `config`, resolved against `cwd` when given. */
export function stateDirectory(config: ListingAgentConfig, cwd?: string): string {
  return cwd === undefined ? config.state.directory : resolve(cwd, config.state.directory);
}
