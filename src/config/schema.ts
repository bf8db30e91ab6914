import type { z } from 'zod';
import { buildConfigSchema } from './schema-build.js';
import { keepConfigSchema } from './schema-kept.js';

export { SECRET_PATHS } from './schema-build.js';

/**
 * The agent's configuration: the one source of truth (built in schema-build.ts). `z.input` is
 * what people write (with defaults), `z.output` what the code reads. `config.schema.json` is
 * generated from it (`npm run config:schema`), and the README's tables list the same fields.
 * Unknown keys are refused, so a typo is an error, not a silent default.
 */
export const configSchema = keepConfigSchema(buildConfigSchema());

/** A configuration as written (JSON file, environment). */
export type ListingAgentConfigInput = z.input<typeof configSchema>;
/** A validated configuration with every default filled in. */
export type ListingAgentConfig = z.output<typeof configSchema>;
