import { buildConfigSchema, SECRET_PATHS } from './schema-build.js';
import type { ListingAgentConfig } from './schema.js';

/*
 * The secrets of a validated configuration, without the schema's module (config/schema.ts builds
 * one and keeps it): the status page needs them, and an agent need not keep a schema for that.
 */

/** The paths of the secret fields: `secret()` notes each as the schema is built (one is built here if none was). */
function secretPaths(): ReadonlySet<string> {
  if (SECRET_PATHS.size === 0) buildConfigSchema();
  return SECRET_PATHS;
}

/** Every secret value in a validated config (to scrub from log lines). */
export function secretValues(config: ListingAgentConfig): string[] {
  const paths = secretPaths();
  const found: string[] = [];
  const walk = (value: unknown, secretPath: string) => {
    if (value === undefined || value === null) return;
    if (paths.has(secretPath) && typeof value === 'string') {
      found.push(value);
      return;
    }
    if (Array.isArray(value)) value.forEach((item) => walk(item, `${secretPath}[]`));
    else if (typeof value === 'object') {
      for (const [key, child] of Object.entries(value)) walk(child, secretPath ? `${secretPath}.${key}` : key);
    }
  };
  walk(config, '');
  return found;
}
