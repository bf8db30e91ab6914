import { environmentVariableName } from '../config/fields.js';
import type { ConfigSources } from '../config/loader.js';

/** The variable that sets `service.token`. */
const TOKEN_VARIABLE = environmentVariableName(['service', 'token']);

/**
 * Where `service.token` was read, in words, for the agent's message when the service refuses the
 * token (the library cannot know: it never reads `process`). The variable wins over the file
 * (see the README's Precedence): `LISTING_AGENT_SERVICE_TOKEN` from the environment or `.env`;
 * else the config file, naming the `${VAR}` whose value it holds when that variable is in the
 * environment (values are only compared, never shown).
 */
export function describeTokenSource(sources: ConfigSources, env: Readonly<Record<string, string | undefined>>, token: string): string {
  if (sources.env.includes(TOKEN_VARIABLE)) {
    const inEnvironment = (env[TOKEN_VARIABLE] ?? '') !== '';
    return `the ${TOKEN_VARIABLE} variable${!inEnvironment && sources.dotenv !== undefined ? ` (set in ${sources.dotenv})` : ''}`;
  }
  if (sources.file !== undefined) {
    const through = sources.env.find((name) => !name.startsWith('LISTING_AGENT_') && env[name] === token);
    return through === undefined
      ? `the config file ${sources.file}`
      : `the ${through} variable, through \${${through}} in the config file ${sources.file}`;
  }
  return `the ${TOKEN_VARIABLE} variable`;
}
