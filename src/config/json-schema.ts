import { z } from 'zod';
import { configSchema } from './schema.js';

/** The `$id` of `config.schema.json`: a name, not a place to fetch (the file ships beside the config). */
const CONFIG_SCHEMA_ID = 'urn:listing-agent:config';

/**
 * The JSON Schema of the config file, generated from the zod schema (what people write: `io:
 * 'input'`, so defaults and written forms such as `30s` appear). Transforms that JSON Schema
 * cannot say become `{}` (`unrepresentable: 'any'`). `npm run config:schema` writes it to
 * `config.schema.json`; a test fails when the committed file is stale.
 */
export function buildConfigJsonSchema(): Record<string, unknown> {
  const { $schema, ...rest } = z.toJSONSchema(configSchema, { io: 'input', unrepresentable: 'any' });
  return {
    $schema,
    $id: CONFIG_SCHEMA_ID,
    title: 'listing-agent configuration',
    description:
      'The config file of listing-agent (listing-agent run --config FILE). String values may use ${VAR} (environment or .env); ' +
        'LISTING_AGENT_* variables override any field.',
    ...rest,
  };
}

/** {@link buildConfigJsonSchema} as the text of `config.schema.json`. */
export function configJsonSchemaText(): string {
  return `${JSON.stringify(buildConfigJsonSchema(), null, 2)}\n`;
}
