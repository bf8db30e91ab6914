import { ValidationError } from '../errors.js';
import { zodIssues } from '../api/context.js';
import { configSchemaForAgents } from '../config/schema-kept.js';
import type { ListingAgentConfig, ListingAgentConfigInput } from '../config/schema.js';

/*
 * The agent's check of its configuration: loaded when the first agent is made (agent/lazy.ts), not
 * when the package is imported. The schema is not config/schema.ts's, which a bot need not keep
 * loaded (configSchemaForAgents()).
 */

/** Validates a configuration as the agent would, or throws `ValidationError` listing every problem. */
export function parseConfig(input: ListingAgentConfigInput): ListingAgentConfig {
  const result = configSchemaForAgents().safeParse(input);
  if (!result.success) throw new ValidationError('config', 'the configuration', zodIssues(result.error));
  return result.data;
}
