import type { z } from 'zod';
import { configSchemaForAgents } from '../config/schema-kept.js';
import type { ListingAgentConfig, ListingAgentConfigInput } from '../config/schema.js';

/*
 * The agent's check of its configuration: loaded when the first agent is made (agent/lazy.ts), not
 * when the package is imported. The schema is not config/schema.ts's, which a bot need not keep
 * loaded (configSchemaForAgents()). What a failure says is agent-config.ts's: its words (and the
 * schema they walk) are loaded only then.
 */

/** A configuration checked by the schema: the config with every default, or zod's issues. */
export type CheckedConfig = { ok: true; config: ListingAgentConfig } | { ok: false; issues: z.core.$ZodIssue[] };

/** Checks a configuration as the agent would. */
export function checkConfig(input: ListingAgentConfigInput): CheckedConfig {
  const result = configSchemaForAgents().safeParse(input);
  return result.success ? { ok: true, config: result.data } : { ok: false, issues: result.error.issues };
}
