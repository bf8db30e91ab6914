/*
 * How a message names a setting, in the voice of the place the user sets it: an embedded agent
 * (in a bot's code) reads only its `config`, so its messages name the config path alone
 * (`health.listen`); the daemon reads `LISTING_AGENT_*` variables too, so its messages name both
 * (`health.listen (LISTING_AGENT_HEALTH_LISTEN)`). Pure, and light: no schema, no zod.
 */

/** How an agent runs: in a bot's process (`embedded`, the library's default) or as `listing-agent run` (`daemon`). */
export type AgentMode = 'embedded' | 'daemon';

/** The environment variable of a field: `votes.pollInterval` -> `LISTING_AGENT_VOTES_POLL_INTERVAL`. */
export function environmentVariableName(path: readonly string[]): string {
  const parts = path.map((key) => key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase());
  return ['LISTING_AGENT', ...parts].join('_');
}

/**
 * The setting at `path` (`state.directory`) as a message names it: the path alone in embedded
 * mode, the path and its variable for the daemon. `undefined` (a part made outside an agent, as
 * the CLI makes them) is the daemon's voice.
 */
export function settingName(path: string, mode: AgentMode | undefined): string {
  return mode === 'embedded' ? path : `${path} (${environmentVariableName(path.split('.'))})`;
}

/** The setting a `ListenError` names (`ListenSetting` of http/listen-error.ts): the variable only for the daemon. */
export function listenSetting(path: string, mode: AgentMode | undefined): { path: string; env?: string } {
  return mode === 'embedded' ? { path } : { path, env: environmentVariableName(path.split('.')) };
}
