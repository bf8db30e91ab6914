/**
 * `listing-agent/config`: the configuration's schema and tools around it: validate without
 * loading files, mask secrets for display, list the environment variables, write the JSON schema.
 * `loadConfig` and the config types are at the package root.
 *
 * @packageDocumentation
 */
export { configSchema, SECRET_PATHS } from '../config/schema.js';
export { buildConfig } from '../config/loader.js';
export type { ConfigSources } from '../config/loader.js';
export { parseConfig } from '../agent/agent-config.js';
export { maskConfig, secretValues } from '../config/mask.js';
export { configEnvironmentVariables } from '../config/fields.js';
export type { ConfigEnvironmentVariable } from '../config/fields.js';
export { buildConfigJsonSchema } from '../config/json-schema.js';

// The types that the signatures above name, so that a bot can name them too.
export type { ConfigErrorReason } from '../config/errors.js';
export type { FieldKind } from '../config/fields.js';
export type { ConfigTexts } from '../config/loader.js';
export type { JsonValue } from '../config/mask.js';
export type { AgentMode } from '../config/setting-names.js';
export type { FieldIssue } from '../errors.js';
