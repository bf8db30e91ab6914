import type { HooksFromConfigOptions } from '../votes/hooks/index.js';

/*
 * The environment of the daemon's exec hooks (`listing-agent run`, `webhooks serve`, `votes
 * retry`): what docs/security.md promises, nothing of the agent's own. Here, in the only layer
 * that reads `process.env`; the library is handed the result.
 */

/** The variables every exec hook of the daemon gets from its environment (when set), under the vote's. */
const HOOK_BASE_VARIABLES: readonly string[] = ['PATH', 'HOME', 'LANG', 'TZ'];

/** Whether `name` is one of the agent's own variables: its settings and credentials, or a variable its config read. */
function isAgentVariable(name: string, configVariables: ReadonlySet<string>): boolean {
  return name.startsWith('LISTING_AGENT_') || name.startsWith('LISTING_OAUTH_') || configVariables.has(name);
}

/** `env` without the agent's own variables: where the names an exec hook lists (`env: ["DATABASE_URL"]`) are copied from. */
export function hookParentEnvironment(
  env: Readonly<Record<string, string | undefined>>,
  configVariables: readonly string[],
): Record<string, string> {
  const read = new Set(configVariables);
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && !isAgentVariable(name, read)) out[name] = value;
  }
  return out;
}

/** The base environment of every exec hook: {@link HOOK_BASE_VARIABLES} of `env`, less a variable the config read. */
export function hookEnvironment(
  env: Readonly<Record<string, string | undefined>>,
  configVariables: readonly string[],
): Record<string, string> {
  const parent = hookParentEnvironment(env, configVariables);
  const out: Record<string, string> = {};
  for (const name of HOOK_BASE_VARIABLES) if (parent[name] !== undefined) out[name] = parent[name];
  return out;
}

/**
 * How the daemon's commands make exec hooks: the base environment, the names each hook lists
 * copied from the rest of the environment (never the agent's own), and the working directory.
 */
export function daemonHookOptions(
  io: { env: Readonly<Record<string, string | undefined>>; cwd: string },
  configVariables: readonly string[],
): Pick<HooksFromConfigOptions, 'env' | 'parentEnv' | 'cwd'> {
  return { env: hookEnvironment(io.env, configVariables), parentEnv: hookParentEnvironment(io.env, configVariables), cwd: io.cwd };
}
