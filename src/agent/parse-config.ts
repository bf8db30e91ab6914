import { ValidationError } from '../errors.js';
import { zodIssues } from '../api/context.js';
import { buildConfigSchema } from '../config/schema-build.js';
import type { ListingAgentConfig, ListingAgentConfigInput } from '../config/schema.js';

/*
 * The agent's check of its configuration: loaded when the first agent is made (agent/lazy.ts), not
 * when the package is imported. The schema is built here rather than taken from config/schema.ts,
 * and only weakly held: its objects (about 1 MiB with zod 4's classic API) are collected once the
 * agents are made, and built again for the next agent if they were.
 */

let built: WeakRef<ReturnType<typeof buildConfigSchema>> | undefined;

function schema(): ReturnType<typeof buildConfigSchema> {
  let found = built?.deref();
  if (found === undefined) built = new WeakRef((found = buildConfigSchema()));
  return found;
}

/** Validates a configuration as the agent would, or throws `ValidationError` listing every problem. */
export function parseConfig(input: ListingAgentConfigInput): ListingAgentConfig {
  const result = schema().safeParse(input);
  if (!result.success) throw new ValidationError('config', 'the configuration', zodIssues(result.error));
  return result.data;
}
