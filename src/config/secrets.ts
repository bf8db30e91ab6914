import { credentialForms, urlCredentialForms } from '../api/redact.js';
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

/**
 * Every credential of a validated config, in every form it can show in text: the one list that
 * every place that scrubs text uses (the logs, hook errors, the status page, the CLI). Each
 * secret field (`SECRET_PATHS`) with its `credentialForms` (an `authorization` without its
 * scheme word, Basic's decoded `user:password` and password, a URL's password and token-like
 * query values), and the credentials of every other URL of the config (`urlCredentialForms`:
 * `votes.hooks[].url`, `webhooks.publicUrl`, `service.v1`, ...).
 */
export function secretValues(config: ListingAgentConfig): string[] {
  const paths = secretPaths();
  const found = new Set<string>();
  const walk = (value: unknown, secretPath: string) => {
    if (value === undefined || value === null) return;
    if (typeof value === 'string') {
      for (const form of paths.has(secretPath) ? credentialForms(value) : urlCredentialForms(value)) found.add(form);
      return;
    }
    if (Array.isArray(value)) value.forEach((item) => walk(item, `${secretPath}[]`));
    else if (typeof value === 'object') {
      for (const [key, child] of Object.entries(value)) walk(child, secretPath ? `${secretPath}.${key}` : key);
    }
  };
  walk(config, '');
  return [...found];
}
