import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { buildConfigJsonSchema } from '../../../src/config/json-schema.js';
import { loadConfig } from '../../../src/config/loader.js';
import { maskConfig } from '../../../src/config/mask.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

describe('config.schema.json', () => {
  it('is up to date with the zod schema', async () => {
    const committed = JSON.parse(await readFile(`${ROOT}config.schema.json`, 'utf8')) as unknown;
    expect(committed, 'config.schema.json is stale: run `npm run config:schema` and commit the result').toEqual(buildConfigJsonSchema());
  });

  it('describes what people write: defaults, secrets write-only, no unknown keys', () => {
    const schema = buildConfigJsonSchema() as {
      $id: string;
      title: string;
      additionalProperties: boolean;
      required: string[];
      properties: Record<string, { properties: Record<string, { default?: unknown; writeOnly?: boolean }> }>;
    };
    expect(schema.$id).toBe('urn:listing-agent:config');
    expect(schema.title).toBe('listing-agent configuration');
    expect(schema.additionalProperties).toBe(false);
    expect(schema.required).toEqual(['service']);
    expect(schema.properties.stats!.properties.interval!.default).toBe('30m');
    expect(schema.properties.service!.properties.token!.writeOnly).toBe(true);
  });
});

describe('config.example.json', () => {
  it('points at the schema and loads and validates with its variables set', async () => {
    const text = await readFile(`${ROOT}config.example.json`, 'utf8');
    expect(JSON.parse(text)).toMatchObject({ $schema: './config.schema.json', service: { token: '${LISTING_AGENT_SERVICE_TOKEN}' } });
    const variables = { DISCORD_BOT_TOKEN: 'example-bot-token', REWARD_HOOK_AUTHORIZATION: 'Bearer example', REWARD_HOOK_SECRET: 'example-secret', LISTING_AGENT_SERVICE_TOKEN: 'example.project.token' };
    const { config, sources } = await loadConfig({
      file: 'config.example.json',
      env: variables,
      cwd: ROOT,
      // The repository's own .env, if a developer has one, is not part of the example.
      readFile: (path) => (path.endsWith('/.env') ? Promise.reject(Object.assign(new Error('no .env'), { code: 'ENOENT' })) : readFile(path, 'utf8')),
    });
    expect(config.service).toEqual({ v1: 'http://127.0.0.1:4545/api/v1', v0: 'http://127.0.0.1:4545/api', token: 'example.project.token' });
    expect(sources.env).toEqual(Object.keys(variables).sort());
    // Every section is there, written out.
    const example = JSON.parse(text) as Record<string, unknown>;
    expect(Object.keys(example).sort()).toEqual(Object.keys({ $schema: 1, ...maskConfig(config) }).sort());
  });
});
