import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configEnvironmentVariables } from '../../src/config/fields.js';
import { codeBlocks, docPages, ROOT } from './markdown.js';

/**
 * One name for the project token's variable (issue 32, item 9): the daemon reads
 * `LISTING_AGENT_SERVICE_TOKEN`, and every example a bot owner copies (the README, docs/,
 * examples/, config.example.json, deploy/.env.example) names that one, not a name of its own.
 */

const VARIABLE = 'LISTING_AGENT_SERVICE_TOKEN';

/** `where: name` for every variable given as the project token in code: `token`/`projectToken` of the package's factories. */
function tokenVariablesInCode(where: string, code: string): string[] {
  const found: string[] = [];
  for (const call of code.matchAll(/\b(createListingAgent|createListingClient)\(\{/g)) {
    const options = code.slice(call.index, code.indexOf('})', call.index) + 2);
    for (const match of options.matchAll(/\b(?:token|projectToken):\s*process\.env\.(\w+)/g)) found.push(`${where}: ${match[1]}`);
  }
  return found;
}

/** `where: name` for a config file's `service.token` written as `${VAR}`. */
function tokenVariableInConfig(where: string, text: string): string[] {
  const token = (JSON.parse(text) as { service?: { token?: unknown } }).service?.token;
  const match = typeof token === 'string' ? /^\$\{(\w+)\}$/.exec(token) : null;
  return match ? [`${where}: ${match[1]}`] : [];
}

function exampleFiles(): string[] {
  return readdirSync(join(ROOT, 'examples'), { recursive: true, encoding: 'utf8' }).filter((file) => /\.(ts|cts|mts|js|cjs|mjs)$/.test(file));
}

describe(`the project token's variable is ${VARIABLE} everywhere`, () => {
  it('is the variable the daemon reads for service.token', () => {
    expect(configEnvironmentVariables().find((v) => v.path === 'service.token')?.name).toBe(VARIABLE);
  });

  it('in the code of the README, docs/ and examples/', () => {
    const found: string[] = [];
    for (const block of docPages().flatMap(codeBlocks)) {
      const where = `${block.file}:${block.line}`;
      if (['ts', 'js'].includes(block.lang)) found.push(...tokenVariablesInCode(where, block.text));
      if (block.lang === 'json' && block.attributes.length === 0) found.push(...tokenVariableInConfig(where, block.text));
    }
    for (const file of exampleFiles()) found.push(...tokenVariablesInCode(`examples/${file}`, readFileSync(join(ROOT, 'examples', file), 'utf8')));
    expect(found.length).toBeGreaterThan(5);
    expect(found.filter((entry) => !entry.endsWith(`: ${VARIABLE}`))).toEqual([]);
  });

  it('in config.example.json and deploy/.env.example', () => {
    expect(tokenVariableInConfig('config.example.json', readFileSync(join(ROOT, 'config.example.json'), 'utf8'))).toEqual([`config.example.json: ${VARIABLE}`]);
    expect(readFileSync(join(ROOT, 'deploy/.env.example'), 'utf8')).toMatch(new RegExp(`^${VARIABLE}=$`, 'm'));
  });
});
