import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { CONFIG_FILE_VARIABLE, configEnvironmentVariables } from '../../../src/config/fields.js';

describe('README', () => {
  it('lists every LISTING_AGENT_* variable the schema derives', async () => {
    const readme = await readFile(new URL('../../../README.md', import.meta.url), 'utf8');
    const missing = [CONFIG_FILE_VARIABLE, ...configEnvironmentVariables().map((v) => v.name)].filter((name) => !readme.includes(`\`${name}\``));
    expect(missing, 'add these to the table in the README\'s Configuration section (see configEnvironmentVariables())').toEqual([]);
  });
});
