import { ListingAgentError, type FieldIssue } from '../errors.js';

/**
 * What went wrong: the config file (missing, unreadable, not JSON), the `.env` file (unreadable,
 * malformed), or the configuration itself (one or more field problems).
 */
export type ConfigErrorReason = 'file' | 'dotenv' | 'invalid';

/**
 * The configuration cannot be used. `summary` is one line for the CLI that names the problem and
 * the fix; `problems` lists every problem with its path (`votes.hooks[1].url`), for
 * `listing-agent config check`. No message quotes a secret's value.
 */
export class ConfigError extends ListingAgentError {
  readonly problems: FieldIssue[];
  /** One line: the problem and the fix. */
  readonly summary: string;
  readonly reason: ConfigErrorReason;

  constructor(reason: ConfigErrorReason, summary: string, problems: FieldIssue[]) {
    super('config', summary);
    this.reason = reason;
    this.summary = summary;
    this.problems = problems;
  }
}

/** The summary line of a configuration with field problems; `listed` says where all of them are read. */
export function invalidConfigSummary(problems: readonly FieldIssue[], listed = 'listing-agent config check lists them all'): string {
  const lines = problems.map((p) => (p.path ? `${p.path}: ${p.message}` : p.message));
  if (lines.length === 1) return `invalid configuration: ${lines[0]}`;
  const shown = lines.slice(0, 3).join('; ');
  const more = lines.length > 3 ? `; and ${lines.length - 3} more` : '';
  return `invalid configuration, ${lines.length} problems: ${shown}${more} (${listed})`;
}

/**
 * A message as an embedded agent says it: the daemon's words without the `LISTING_AGENT_*`
 * variables in parentheses, which an agent made with createListingAgent never reads
 * (`set stats.push.key (LISTING_AGENT_STATS_PUSH_KEY)` becomes `set stats.push.key`).
 */
export function withoutVariables(message: string): string {
  return message.replace(/ \((?:LISTING_AGENT_[A-Z0-9_]+(?:, | or )?)+\)/g, '');
}
