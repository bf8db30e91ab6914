import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/config/errors.js';
import { locateJsonError } from '../../../src/config/json-position.js';
import { loadConfig } from '../../../src/config/loader.js';
import { CWD, TOKEN, json, memoryFiles } from './files.js';

async function failure(options: Parameters<typeof loadConfig>[0]): Promise<ConfigError> {
  const error = await loadConfig(options).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConfigError);
  return error as ConfigError;
}

describe('the config file', () => {
  it('is read relative to cwd', async () => {
    const files = memoryFiles({ 'conf/c.json': json({ service: { token: TOKEN } }) });
    const { sources, input } = await loadConfig({ file: 'conf/c.json', env: {}, cwd: CWD, readFile: files.readFile });
    expect(sources).toEqual({ file: `${CWD}/conf/c.json`, env: [] });
    expect(input).toEqual({ service: { token: TOKEN } });
  });

  it('missing: names the file and the fix', async () => {
    const error = await failure({ file: './x.json', env: {}, cwd: CWD, readFile: memoryFiles({}).readFile });
    expect(error.reason).toBe('file');
    expect(error.summary).toBe('cannot read config file ./x.json: no such file — pass --config with the path of your config, or configure with LISTING_AGENT_* variables');
    expect(error.message).toBe(error.summary);
    const fromVariable = await failure({ env: { LISTING_AGENT_CONFIG: 'gone.json' }, cwd: CWD, readFile: memoryFiles({}).readFile });
    expect(fromVariable.summary).toBe(
      'cannot read config file gone.json: no such file — set LISTING_AGENT_CONFIG to the path of your config file, or unset it and configure with LISTING_AGENT_* variables',
    );
  });

  it('unreadable or a directory: names the problem and the fix', async () => {
    const unreadable = await failure({ file: 'c.json', env: {}, cwd: CWD, readFile: memoryFiles({}, { 'c.json': 'EACCES' }).readFile });
    expect(unreadable.summary).toBe('cannot read config file c.json: permission denied — make it readable by the user running listing-agent');
    const directory = await failure({ file: 'conf', env: {}, cwd: CWD, readFile: memoryFiles({}, { conf: 'EISDIR' }).readFile });
    expect(directory.summary).toContain('cannot read config file conf: it is a directory — pass --config');
  });

  it('not JSON: gives the line and column, and quotes nothing of the file', async () => {
    const text = '{\n  "service": {\n    "token": SECRET.TOKEN.X\n  }\n}\n';
    const error = await failure({ file: 'c.json', env: {}, cwd: CWD, readFile: memoryFiles({ 'c.json': text }).readFile });
    expect(error.summary).toBe(
      'config file c.json is not valid JSON at line 3, column 14: unexpected character (strings need double quotes) — fix it there (JSON allows no comments and no trailing commas)',
    );
    expect(error.summary).not.toContain('SECRET');
    const notObject = await failure({ file: 'c.json', env: {}, cwd: CWD, readFile: memoryFiles({ 'c.json': '[1]' }).readFile });
    expect(notObject.summary).toContain('must hold a JSON object');
  });

  it('accepts a byte order mark', async () => {
    const files = memoryFiles({ 'c.json': `\ufeff${json({ service: { token: TOKEN } })}` });
    await expect(loadConfig({ file: 'c.json', env: {}, cwd: CWD, readFile: files.readFile })).resolves.toBeDefined();
  });
});

describe('locateJsonError', () => {
  it.each([
    ['{"a": 1,}', 1, 8, 'a trailing comma before }'],
    ['{"a": 1 "b": 2}', 1, 9, 'expected , or }'],
    ['{\n  "a": 1\n', 3, 1, 'unexpected end of file (a missing }?)'],
    ['{"a" 1}', 1, 6, 'expected : after the property name'],
    ["{'a': 1}", 1, 2, 'expected a property name in double quotes'],
    ['{"a": "x\ny"}', 1, 9, 'a line break or control character inside a string (write \\n)'],
    ['{"a": "x', 1, 7, 'unterminated string (a missing closing ")'],
    ['// c\n{}', 1, 1, 'JSON has no comments'],
    ['{} {}', 1, 4, 'more content after the end of the JSON value'],
    ['[1, 2,]', 1, 6, 'a trailing comma before ]'],
    ['{"a": "\\q"}', 1, 8, 'an unknown escape in a string (a backslash is written \\\\)'],
    ['', 1, 1, 'unexpected end of file (an unclosed { or [?)'],
  ])('%j: line %i, column %i, %s', (text, line, column, reason) => {
    expect(() => JSON.parse(text)).toThrow();
    expect(locateJsonError(text)).toEqual({ line, column, reason });
  });

  it('finds nothing wrong with valid JSON', () => {
    expect(locateJsonError('{"a": [1, -2.5e3, true, false, null, "\\u00e9\\n"], "b": {}}')).toBeUndefined();
  });
});
