import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { configJsonSchemaText } from './json-schema.js';

// `npm run config:schema`: run from dist/config/ after the build; the repository root is two up
// (the same from src/config/).
const target = new URL('../../config.schema.json', import.meta.url);
await writeFile(target, configJsonSchemaText());
console.log(`wrote ${fileURLToPath(target)}`);
