/**
 * `npm run config:schema`: writes config.schema.json from the zod schema (runs from the TypeScript
 * sources, no build needed). A script, not a module of src/: its top-level await would make any
 * graph that imported it unloadable by CommonJS `require()` (Node's require of ES modules refuses
 * top-level await), and nothing shipped needs it.
 *
 *   node --import ./test/helpers/ts-register.mjs scripts/write-config-schema.ts
 */
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { configJsonSchemaText } from '../src/config/json-schema.js';

const target = new URL('../config.schema.json', import.meta.url);
await writeFile(target, configJsonSchemaText());
console.log(`wrote ${fileURLToPath(target)}`);
