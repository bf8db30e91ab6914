import { ConfigError, invalidConfigSummary, withoutVariables } from '../config/errors.js';
import type { ListingAgentConfig, ListingAgentConfigInput } from '../config/schema.js';
import type { FieldIssue } from '../errors.js';
import { configWithShorthands } from './embedded.js';
import { configParsing, configProblems } from './lazy.js';
import type { ListingAgentOptions, StartInputs } from './options.js';
import { startProblems } from './start-problems.js';

/*
 * The configuration an agent runs with, and what it says when it cannot: one `ConfigError`
 * (reason `invalid`) whose `problems` are the ones `listing-agent config check` lists for the same
 * input (the schema's, with did-you-mean, then start-problems.ts's), never zod's own text. An
 * embedded agent's words leave out the LISTING_AGENT_* variables: it reads none.
 */

type Mode = NonNullable<ListingAgentOptions['mode']>;

/** The error an agent throws (or its start rejects with) for `problems`, in the words of `mode`. */
export function configError(problems: readonly FieldIssue[], mode: Mode): ConfigError {
  if (mode === 'daemon') return new ConfigError('invalid', invalidConfigSummary(problems), [...problems]);
  const said = problems.map((problem) => ({ path: problem.path, message: withoutVariables(problem.message) }));
  return new ConfigError('invalid', invalidConfigSummary(said, 'the error\'s problems list them all'), said);
}

/**
 * Validates a configuration as the agent would, or throws `ConfigError` (reason `invalid`) listing
 * every problem with its path, unknown fields with a did-you-mean (`votes.enable: unknown field
 * (did you mean enabled?)`). The words that describe them (and the schema they walk) are loaded
 * only for a configuration that has problems.
 */
export function parseConfig(input: ListingAgentConfigInput): ListingAgentConfig {
  return validatedConfig(input, 'embedded');
}

/** {@link parseConfig} in the words of `mode`. */
function validatedConfig(input: ListingAgentConfigInput, mode: Mode): ListingAgentConfig {
  const checked = configParsing.get().checkConfig(input);
  if (checked.ok) return checked.config;
  const context = { input, unsetVariables: new Map<string, string>(), environmentSources: new Map<string, string>(), reported: [], mode };
  throw configError(configProblems.get().describeIssues(checked.issues, context), mode);
}

/** What the agent has besides its configuration, for start-problems.ts (`listeners` as it starts). */
export function startInputs(options: ListingAgentOptions, listeners?: StartInputs['listeners']): StartInputs {
  return {
    mode: options.mode ?? 'embedded',
    ...(options.discord !== undefined ? { discord: options.discord } : {}),
    ...(options.countSource !== undefined ? { countSource: true } : {}),
    ...(options.commands !== undefined ? { commands: true } : {}),
    ...(options.votes?.hooks !== undefined ? { voteHooks: options.votes.hooks.length } : {}),
    ...(listeners !== undefined ? { listeners } : {}),
  };
}

/**
 * The configuration of an agent made with `options`: the shorthands (`token`, `discord`), the
 * schema, then what its capabilities need beyond it (a bot to count, a commands source, unique
 * hook names; for the daemon, a hook for its votes). Throws one `ConfigError` listing every
 * problem. With `capabilities` given, only the schema applies.
 */
export function agentConfig(options: ListingAgentOptions): ListingAgentConfig {
  const mode = options.mode ?? 'embedded';
  const config = validatedConfig(configWithShorthands(options), mode);
  const problems = options.capabilities === undefined ? startProblems(config, startInputs(options)) : [];
  if (problems.length > 0) throw configError(problems, mode);
  return config;
}
