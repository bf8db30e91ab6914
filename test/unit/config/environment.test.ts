import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/config/errors.js';
import { configEnvironmentVariables, configFields, environmentVariableName } from '../../../src/config/fields.js';
import { buildConfig, loadConfig } from '../../../src/config/loader.js';
import { CWD, TOKEN, json, memoryFiles } from './files.js';

function valueAt(root: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], root);
}

// A valid value for each field that has no default to copy; a new field without a default needs one.
const SAMPLES: Record<string, string> = {
  'service.token': 'other.project.token',
  'discord.token': 'bot-token',
  'discord.applicationId': '123456789012345678',
  'webhooks.legacyAuthorization': 'legacy-shared-secret',
  'webhooks.publicUrl': 'https://bot.example/webhooks/listing',
  'stats.schedule': '*/15 * * * *',
  'stats.push.key': 'push-shared-key-0123',
  'commands.file': 'commands.json',
  'commands.interval': '10m',
  'state.redis.url': 'redis://127.0.0.1:6379',
  'state.redis.tls.caFile': '/etc/ssl/redis-ca.pem',
  'state.redis.tls.serverName': 'redis.internal',
  'state.redis.agentId': 'agent-a',
  'state.redis.sentinel.masterName': 'mymaster',
  'state.redis.sentinel.username': 'sentinel-user',
  'state.redis.sentinel.password': 'sentinel-password',
  'state.redis.sentinel.tls.caFile': '/etc/ssl/sentinel-ca.pem',
  'state.redis.sentinel.tls.serverName': 'sentinel.internal',
  'state.redis.username': 'agent',
  'state.redis.password': 'redis-password',
  'votes.stream.maxLength': '5000',
  'health.adminToken': 'an-admin-token-0123456789',
};

function sample(name: string): { text: string; expected: unknown } {
  const variable = configEnvironmentVariables().find((v) => v.name === name)!;
  const field = configFields().find((f) => f.path.join('.') === variable.path)!;
  switch (field.kind) {
    case 'boolean':
      return field.default === true ? { text: 'no', expected: false } : { text: 'yes', expected: true };
    case 'number': {
      const text = SAMPLES[variable.path] ?? '7';
      return { text, expected: Number(text) };
    }
    case 'list':
      return { text: 'whs_one, whs_two,', expected: ['whs_one', 'whs_two'] };
    case 'json':
      return { text: '[{"url":"http://127.0.0.1:1/hook","timeout":"2s"}]', expected: [{ url: 'http://127.0.0.1:1/hook', timeout: '2s' }] };
    case 'enum':
      return { text: field.options!.at(-1)!, expected: field.options!.at(-1) };
    default: {
      const text = SAMPLES[variable.path] ?? (typeof field.default === 'string' ? field.default : undefined);
      if (text === undefined) throw new Error(`add a sample value for ${variable.path} to SAMPLES`);
      return { text, expected: text };
    }
  }
}

describe('LISTING_AGENT_* variables', () => {
  it('are derived from the schema with SNAKE_CASE names', () => {
    const names = Object.fromEntries(configEnvironmentVariables().map((v) => [v.path, v.name]));
    expect(names['service.token']).toBe('LISTING_AGENT_SERVICE_TOKEN');
    expect(names['votes.pollInterval']).toBe('LISTING_AGENT_VOTES_POLL_INTERVAL');
    expect(names['webhooks.legacyAuthorization']).toBe('LISTING_AGENT_WEBHOOKS_LEGACY_AUTHORIZATION');
    expect(names['health.listen']).toBe('LISTING_AGENT_HEALTH_LISTEN');
    expect(names['$schema']).toBeUndefined();
    expect(environmentVariableName(['a', 'someHTTPThing'])).toBe('LISTING_AGENT_A_SOME_HTTPTHING');
    const all = configEnvironmentVariables().map((v) => v.name);
    expect(new Set(all).size).toBe(all.length);
    const secrets = configEnvironmentVariables().filter((v) => v.secret).map((v) => v.path);
    expect(secrets).toEqual(['service.token', 'discord.token', 'stats.push.key', 'webhooks.secrets', 'webhooks.legacyAuthorization', 'state.redis.url', 'state.redis.sentinel.password', 'state.redis.password', 'health.adminToken']);
  });

  it.each(configEnvironmentVariables().map((v) => [v.name, v.path]))('%s lands at %s', (name, path) => {
    const { text, expected } = sample(name);
    const env = { LISTING_AGENT_SERVICE_TOKEN: TOKEN, [name]: text };
    // The webhook receiver needs a secret once enabled.
    if (name === 'LISTING_AGENT_WEBHOOKS_ENABLED') env.LISTING_AGENT_WEBHOOKS_SECRETS = 'whs_x';
    // The Redis section needs its URL or its Sentinels once any of its fields is set, and the stream needs Redis;
    // the Sentinels' fields and the servers' user and password go with Sentinels.
    const withSentinels = name.startsWith('LISTING_AGENT_STATE_REDIS_SENTINEL_') || /^LISTING_AGENT_STATE_REDIS_(USERNAME|PASSWORD)$/.test(name);
    if (withSentinels) Object.assign(env, { LISTING_AGENT_STATE_REDIS_SENTINEL_MASTER_NAME: 'mymaster', LISTING_AGENT_STATE_REDIS_SENTINEL_NODES: '10.0.0.1:26379' }, { [name]: text });
    else if (name === 'LISTING_AGENT_STATE_REDIS_CLUSTER_NODES') {
      // A cluster stands alone: no URL beside it.
    } else if ((name.startsWith('LISTING_AGENT_STATE_REDIS_') || name === 'LISTING_AGENT_VOTES_STREAM_ENABLED') && name !== 'LISTING_AGENT_STATE_REDIS_URL') env.LISTING_AGENT_STATE_REDIS_URL = 'redis://127.0.0.1:6379';
    const built = buildConfig({ env });
    expect(valueAt(built.input, path)).toEqual(expected);
    expect(built.variables).toContain(name);
  });

  it('make a whole config without a file, typed and validated', async () => {
    const env = {
      LISTING_AGENT_SERVICE_TOKEN: TOKEN,
      LISTING_AGENT_STATS_ENABLED: 'TRUE',
      LISTING_AGENT_VOTES_POLL_INTERVAL: '2m',
      LISTING_AGENT_VOTES_HOOKS: '[{"url":"http://127.0.0.1:9/h","authorization":"hook-secret"}]',
      LISTING_AGENT_WEBHOOKS_ENABLED: '1',
      LISTING_AGENT_WEBHOOKS_SECRETS: 'whs_a,whs_b',
      LISTING_AGENT_HEALTH_LISTEN: '0.0.0.0:9000',
    };
    const files = memoryFiles({});
    const { config, sources } = await loadConfig({ env, cwd: CWD, readFile: files.readFile });
    expect(config.stats.enabled).toBe(true);
    expect(config.votes.pollInterval).toBe(120_000);
    expect(config.votes.hooks).toEqual([{ type: 'http', url: 'http://127.0.0.1:9/h', authorization: 'hook-secret', timeout: 10_000, retries: 5 }]);
    expect(config.webhooks.secrets).toEqual(['whs_a', 'whs_b']);
    expect(config.health.listen).toEqual({ host: '0.0.0.0', port: 9000 });
    expect(sources.file).toBeUndefined();
    expect(sources.env).toEqual(Object.keys(env).sort());
    expect(files.reads).toEqual([`${CWD}/.env`]);
  });

  it('override the file, field by field', async () => {
    const files = memoryFiles({ 'c.json': json({ service: { token: 'file.token.here', v1: 'http://127.0.0.1:4545/api/v1' }, log: { level: 'warn', format: 'json' } }) });
    const { config } = await loadConfig({ file: 'c.json', env: { LISTING_AGENT_SERVICE_TOKEN: TOKEN, LISTING_AGENT_LOG_LEVEL: 'debug' }, cwd: CWD, readFile: files.readFile });
    expect(config.service).toEqual({ token: TOKEN, v1: 'http://127.0.0.1:4545/api/v1', v0: 'https://top.gg/api' });
    expect(config.log).toEqual({ level: 'debug', format: 'json' });
  });

  it('count as unset when empty, everywhere', async () => {
    const files = memoryFiles({ 'c.json': json({ service: { token: TOKEN, v1: '' }, log: { level: 'warn' } }) });
    const { config, sources } = await loadConfig({ file: 'c.json', env: { LISTING_AGENT_LOG_LEVEL: '', LISTING_AGENT_STATS_ENABLED: '', LISTING_AGENT_NOT_A_FIELD: '' }, cwd: CWD, readFile: files.readFile });
    expect(config.service.v1).toBe('https://top.gg/api/v1');
    expect(config.log.level).toBe('warn');
    expect(sources.env).toEqual([]);
  });

  it('report a value that cannot be read, and a name that matches no field, quoting no value', async () => {
    const env = {
      LISTING_AGENT_SERVICE_TOKEN: TOKEN,
      LISTING_AGENT_STATS_ENABLED: 'maybe',
      LISTING_AGENT_VOTES_HOOKS: '[{"url": "http://x", "authorization": hook-secret}]',
      LISTING_AGENT_SERVICE_TOKN: 'x',
    };
    const error = (await loadConfig({ env, cwd: CWD, readFile: memoryFiles({}).readFile }).catch((e: unknown) => e)) as ConfigError;
    expect(error.problems.map((p) => `${p.path}: ${p.message}`)).toEqual([
      'stats.enabled: must be true or false (also 1/0, yes/no) (from LISTING_AGENT_STATS_ENABLED)',
      'votes.hooks: is not valid JSON (line 1, column 39: unexpected character (strings need double quotes)) (from LISTING_AGENT_VOTES_HOOKS)',
      'LISTING_AGENT_SERVICE_TOKN: unknown variable (did you mean LISTING_AGENT_SERVICE_TOKEN?): fix its name or remove it',
    ]);
    expect(JSON.stringify(error.problems) + error.summary).not.toContain('hook-secret');
  });

  it('let a config file name its own ${VAR}s with the prefix', async () => {
    const files = memoryFiles({ 'c.json': json({ service: { token: '${LISTING_AGENT_MY_TOKEN}' }, log: { level: '${LISTING_AGENT_UNSET_ONE}' } }) });
    const env = { LISTING_AGENT_MY_TOKEN: TOKEN, LISTING_AGENT_UNSET_ONE: '' };
    const { config } = await loadConfig({ file: 'c.json', env, cwd: CWD, readFile: files.readFile });
    expect(config.service.token).toBe(TOKEN);
  });

  it('say which variable set a field that is invalid', () => {
    expect(() => buildConfig({ env: { LISTING_AGENT_SERVICE_TOKEN: TOKEN, LISTING_AGENT_VOTES_HOOKS: '[{"url":"ftp://x"}]', LISTING_AGENT_LOG_LEVEL: 'loud' } })).toThrow(
      'votes.hooks[0].url: must be an absolute URL (http or https) (from LISTING_AGENT_VOTES_HOOKS)',
    );
  });
});
