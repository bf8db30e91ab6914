import type { LoadConfigOptions, LoadedConfig } from './loader.js';

/**
 * Loads the configuration the way `listing-agent run` does: `.env` from `cwd`, the JSON file
 * (`file`, else `LISTING_AGENT_CONFIG`) with `${VAR}` interpolation, then `LISTING_AGENT_*`
 * variables over it, validated by the schema. Throws `ConfigError` (one-line `summary`,
 * every problem in `problems`). Neither `env` nor `process.env` is changed.
 *
 * The package root's `loadConfig`: the loader, the schema and zod are loaded at its first call,
 * not when the package is imported (issue 25).
 */
export async function loadConfig(options: LoadConfigOptions): Promise<LoadedConfig> {
  return (await import('./loader.js')).loadConfig(options);
}
