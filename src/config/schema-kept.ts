import { buildConfigSchema } from './schema-build.js';

type ConfigSchema = ReturnType<typeof buildConfigSchema>;

/** `configSchema` of schema.ts, once that module is loaded (the daemon's loader, the doctor). */
let kept: ConfigSchema | undefined;
/** The last schema built for an agent, held weakly. */
let built: WeakRef<ConfigSchema> | undefined;

/** Notes `schema` as the one kept for the process's life (schema.ts's `configSchema`); returns it. */
export function keepConfigSchema(schema: ConfigSchema): ConfigSchema {
  kept = schema;
  return schema;
}

/**
 * The schema an agent checks its configuration with: the kept one when schema.ts is loaded anyway,
 * else one built now and held only weakly, so that its objects (zod 4's classic API makes many)
 * are collected once the agents are made, and built again for the next agent if they were.
 */
export function configSchemaForAgents(): ConfigSchema {
  let found = kept ?? built?.deref();
  if (found === undefined) built = new WeakRef((found = buildConfigSchema()));
  return found;
}
