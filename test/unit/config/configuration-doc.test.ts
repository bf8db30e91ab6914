import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { CONFIG_FILE_VARIABLE, configEnvironmentVariables } from '../../../src/config/fields.js';

describe('docs/configuration.md', () => {
  it('names every LISTING_AGENT_* variable the schema derives, and the config file variable', async () => {
    const page = await readFile(new URL('../../../docs/configuration.md', import.meta.url), 'utf8');
    const missing = [CONFIG_FILE_VARIABLE, ...configEnvironmentVariables().map((v) => v.name)].filter((name) => !page.includes(`\`${name}\``));
    expect(missing, 'the table of every key in docs/configuration.md is generated from the schema: run `npm run docs`').toEqual([]);
  });
});
