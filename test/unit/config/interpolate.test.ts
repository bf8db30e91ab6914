import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/config/errors.js';
import { interpolateConfig } from '../../../src/config/interpolate.js';
import { loadConfig } from '../../../src/config/loader.js';
import { CWD, TOKEN, json, memoryFiles } from './files.js';

async function problemsOf(promise: Promise<unknown>) {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConfigError);
  return (error as ConfigError).problems.map((p) => `${p.path}: ${p.message}`);
}

describe('${VAR} interpolation', () => {
  it('replaces a whole value and part of a value, in objects and arrays', () => {
    const result = interpolateConfig(
      { service: { token: '${TOKEN}', v1: 'http://${HOST}:${PORT}/api/v1' }, webhooks: { secrets: ['${A}', 'whs_${B}'] } },
      { TOKEN, HOST: '127.0.0.1', PORT: '4545', A: 'whs_a', B: 'b' },
    );
    expect(result.problems).toEqual([]);
    expect(result.value).toEqual({
      service: { token: TOKEN, v1: 'http://127.0.0.1:4545/api/v1' },
      webhooks: { secrets: ['whs_a', 'whs_b'] },
    });
    expect([...result.used].sort()).toEqual(['A', 'B', 'HOST', 'PORT', 'TOKEN']);
  });

  it('reads $${ as a literal ${ and leaves keys and non-strings alone', () => {
    const result = interpolateConfig({ a: 'price: $${AMOUNT}', '${KEY}': 1, b: true, c: null }, { AMOUNT: '5' });
    expect(result.value).toEqual({ a: 'price: ${AMOUNT}', '${KEY}': 1, b: true, c: null });
    expect(result.problems).toEqual([]);
    expect(result.used.size).toBe(0);
  });

  it('reports a missing or empty variable inside a value with its path and name', () => {
    const result = interpolateConfig({ service: { v1: 'http://${HOST}/api' }, votes: { hooks: [{ url: 'x' }, { url: 'http://${EMPTY}/x' }] } }, { EMPTY: '' });
    expect(result.problems).toEqual([
      { path: 'service.v1', message: '${HOST} is not set (set HOST in the environment or .env)' },
      { path: 'votes.hooks[1].url', message: '${EMPTY} is not set (set EMPTY in the environment or .env)' },
    ]);
  });

  it('reports a ${ that starts no variable', () => {
    const result = interpolateConfig({ a: 'x${not a name}', b: 'x${' }, {});
    expect(result.problems.map((p) => p.path)).toEqual(['a', 'b']);
    expect(result.problems[0]!.message).toContain('$${');
  });

  it('treats a whole ${VAR} that is unset or empty as an unset field, and an empty string too', () => {
    const result = interpolateConfig({ discord: { token: '${UNSET}' }, log: { level: '${EMPTY}', format: '' }, webhooks: { secrets: ['whs_a', '${UNSET}'] } }, { EMPTY: '' });
    expect(result.value).toEqual({ discord: {}, log: {}, webhooks: { secrets: ['whs_a'] } });
    expect(result.problems).toEqual([]);
    expect(Object.fromEntries(result.unsetVariables)).toEqual({ 'discord.token': 'UNSET', 'log.level': 'EMPTY', 'webhooks.secrets[1]': 'UNSET' });
  });
});

describe('interpolation through loadConfig', () => {
  it('lets defaults apply to an unset whole ${VAR}', async () => {
    const files = memoryFiles({ 'c.json': json({ service: { token: '${T}' }, log: { level: '${LEVEL}' } }) });
    const { config, sources } = await loadConfig({ file: 'c.json', env: { T: TOKEN, LEVEL: '' }, cwd: CWD, readFile: files.readFile });
    expect(config.log.level).toBe('info');
    expect(config.service.token).toBe(TOKEN);
    expect(sources.env).toEqual(['T']);
  });

  it('names the empty variable when the field it leaves unset is required', async () => {
    const files = memoryFiles({ 'c.json': json({ service: { token: '${LISTING_TOKEN}' } }) });
    const problems = await problemsOf(loadConfig({ file: 'c.json', env: { LISTING_TOKEN: '' }, cwd: CWD, readFile: files.readFile }));
    expect(problems).toEqual(['service.token: missing: ${LISTING_TOKEN} is empty or not set (set LISTING_TOKEN in the environment or .env)']);
  });

  it('reports a missing variable inside a value once, not again as a bad URL', async () => {
    const files = memoryFiles({ 'c.json': json({ service: { token: TOKEN, v1: 'http://${HOST}/api/v1' } }) });
    const problems = await problemsOf(loadConfig({ file: 'c.json', env: {}, cwd: CWD, readFile: files.readFile }));
    expect(problems).toEqual(['service.v1: ${HOST} is not set (set HOST in the environment or .env)']);
  });

  it('forgets a broken ${VAR} when a LISTING_AGENT_* variable sets the field', async () => {
    const files = memoryFiles({ 'c.json': json({ service: { token: 'x.${MISSING}.z' } }) });
    const { config } = await loadConfig({ file: 'c.json', env: { LISTING_AGENT_SERVICE_TOKEN: TOKEN }, cwd: CWD, readFile: files.readFile });
    expect(config.service.token).toBe(TOKEN);
  });
});
