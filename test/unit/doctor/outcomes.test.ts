import { describe, expect, it } from 'vitest';
import { formatReport } from '../../../src/cli/commands/doctor.js';
import { ConfigError } from '../../../src/config/errors.js';
import { configOutcome, outcomeWithoutConfig } from '../../../src/doctor/checks/config.js';
import { clockOutcome, tokenOutcome } from '../../../src/doctor/checks/service.js';
import { redisVersion } from '../../../src/doctor/checks/redis.js';
import { redisUrlSecrets, scrubbableSecrets } from '../../../src/doctor/deps.js';
import { DOCTOR_CHECK_NAMES, secretEnvironmentValues } from '../../../src/doctor/doctor.js';
import { reportOf } from '../../../src/doctor/runner.js';
import type { ServiceAnswer } from '../../../src/doctor/service-probe.js';

const T0 = Date.parse('2026-11-25T12:00:00.000Z');
const answer = (status: number, body: unknown, date = 'Wed, 25 Nov 2026 12:00:00 GMT'): ServiceAnswer => ({
  kind: 'answer',
  url: 'http://service/api/v1/projects/@me',
  status,
  date,
  sentAt: T0,
  receivedAt: T0 + 40,
  body,
});

describe('what the service answer says', () => {
  it('shows the project of an accepted token', () => {
    const project = { id: '1000000000000000010', name: 'Demo Bot', platform: 'discord', type: 'bot', headline: 'x', tags: [], votes: 0, votes_total: 0, review_score: 0, review_count: 0 };
    expect(tokenOutcome(answer(200, project))).toMatchObject({ status: 'ok', summary: 'accepted: project Demo Bot (ID 1000000000000000010, discord bot)' });
  });

  it('fails a refused, malformed or orphaned token with the fix, and a failing service as such', () => {
    const refused = tokenOutcome(answer(401, { type: 'about:blank', title: 'Unauthorized', status: 401, detail: 'invalid token' }));
    expect(refused).toMatchObject({ status: 'fail', summary: expect.stringContaining('refused the token (401: invalid token)') });
    expect(refused.fix).toContain('service.token (LISTING_AGENT_SERVICE_TOKEN)');
    expect(tokenOutcome(answer(400, {})).summary).toContain('malformed (400)');
    expect(tokenOutcome(answer(404, {})).summary).toContain('no longer exists');
    expect(tokenOutcome(answer(503, {}))).toMatchObject({ status: 'fail', summary: 'the service failed to answer (503)' });
    expect(tokenOutcome(answer(429, {})).status).toBe('warn');
    const down = tokenOutcome({ kind: 'unreachable', url: 'http://x/api/v1/projects/@me', reason: 'connection refused', timedOut: false });
    expect(down).toMatchObject({ status: 'fail', summary: 'cannot reach the service at http://x/api/v1/projects/@me: connection refused' });
  });

  it('compares clocks from any answer, and skips when there was none', () => {
    expect(clockOutcome(answer(401, {})).status).toBe('ok');
    const behind = clockOutcome(answer(401, {}, 'Wed, 25 Nov 2026 12:06:40 GMT'));
    expect(behind).toMatchObject({ status: 'fail', summary: expect.stringContaining('this machine is 400 s behind the service') });
    expect(behind.fix).toContain('timedatectl set-ntp true');
    expect(clockOutcome(answer(200, {}, 'Wed, 25 Nov 2026 11:59:00 GMT')).status).toBe('warn');
    expect(clockOutcome({ kind: 'unreachable', url: 'u', reason: 'connection refused', timedOut: false }).status).toBe('skip');
    expect(clockOutcome({ ...answer(200, {}), date: undefined } as ServiceAnswer).status).toBe('warn');
  });
});

describe('the config check', () => {
  const loaded = (env: string[], file?: string) => ({ ok: true as const, loaded: { config: {} as never, input: {} as never, sources: { env, ...(file ? { file } : {}) } } });

  it('names the file and the variables that override it, apart from the ${VAR}s', () => {
    const outcome = configOutcome(loaded(['BOT_TOKEN', 'LISTING_AGENT_LOG_LEVEL', 'LISTING_AGENT_SERVICE_TOKEN'], '/etc/agent.json'));
    expect(outcome.status).toBe('ok');
    expect(outcome.summary).toBe('valid, from /etc/agent.json; overridden by LISTING_AGENT_LOG_LEVEL, LISTING_AGENT_SERVICE_TOKEN; ${VAR}s read: BOT_TOKEN');
    expect(configOutcome(loaded([])).summary).toBe('valid, from LISTING_AGENT_* variables and defaults only (no config file); no LISTING_AGENT_* variable overrides it');
  });

  it('fails with every problem, and fails the checks whose settings are at fault', () => {
    const error = new ConfigError('invalid', 'invalid', [
      { path: 'service.token', message: 'is required' },
      { path: 'webhooks.secrets', message: 'the receiver is enabled but has no secret' },
    ]);
    const outcome = configOutcome({ ok: false, error });
    expect(outcome).toMatchObject({ status: 'fail', summary: 'invalid: 2 problems, first service.token: is required' });
    expect(outcome.details).toEqual({ problems: ['service.token: is required', 'webhooks.secrets: the receiver is enabled but has no secret'] });
    expect(outcomeWithoutConfig({ paths: ['webhooks.secrets', 'webhooks.legacyAuthorization'] }, error)).toMatchObject({ status: 'fail', summary: 'webhooks.secrets: the receiver is enabled but has no secret' });
    expect(outcomeWithoutConfig({ paths: ['state.directory'] }, error)).toEqual({ status: 'skip', summary: 'needs a valid configuration (see config)' });
  });

  it('splits an unreadable file into what and fix', () => {
    const error = new ConfigError('file', 'cannot read config file a.json: no such file — pass --config with the path of your config', []);
    expect(configOutcome({ ok: false, error })).toEqual({ status: 'fail', summary: 'cannot read config file a.json: no such file', fix: 'pass --config with the path of your config' });
  });
});

describe('small pure parts', () => {
  it('collects the values of the secret variables, list items too', () => {
    const values = secretEnvironmentValues({
      LISTING_AGENT_SERVICE_TOKEN: 'a.b.c',
      LISTING_AGENT_WEBHOOKS_SECRETS: 'whs_one, whs_two',
      LISTING_AGENT_LOG_LEVEL: 'debug',
      LISTING_AGENT_DISCORD_TOKEN: '',
    });
    expect(values).toEqual(expect.arrayContaining(['a.b.c', 'whs_one', 'whs_two']));
    expect(values).not.toContain('debug');
  });

  it('keeps a Redis URL printable, and only its password secret', () => {
    expect(redisUrlSecrets('redis://127.0.0.1:6379')).toEqual([]);
    expect(redisUrlSecrets('rediss://app:p%40ss@redis.example:6380/2')).toEqual(['p%40ss', 'p@ss', 'app:p%40ss', 'app:p@ss']);
    expect(redisUrlSecrets('not a url')).toEqual(['not a url']);
    expect(scrubbableSecrets(['a.b.c', 'redis://:pw1234@h:1'], 'redis://:pw1234@h:1')).toEqual(['a.b.c', 'pw1234']);
    expect(secretEnvironmentValues({ LISTING_AGENT_STATE_REDIS_URL: 'redis://:hunter22@h:1' })).toEqual(['hunter22']);
  });

  it('reads the version out of INFO server', () => {
    expect(redisVersion('# Server\r\nredis_version:7.0.15\r\nredis_mode:standalone\r\n')).toBe('7.0.15');
  });

  it('lists every check, config first', () => {
    expect(DOCTOR_CHECK_NAMES[0]).toBe('config');
    expect(new Set(DOCTOR_CHECK_NAMES).size).toBe(DOCTOR_CHECK_NAMES.length);
  });

  it('formats one line per check, the fix beneath a warn or a fail, and a tally', () => {
    const text = formatReport(
      reportOf([
        { name: 'config', status: 'ok', summary: 'valid', durationMs: 0 },
        { name: 'service.clock', status: 'warn', summary: 'drifting', fix: 'sync it', durationMs: 1 },
        { name: 'redis.server', status: 'skip', summary: 'no redis', fix: 'never shown', durationMs: 0 },
        { name: 'service.token', status: 'fail', summary: 'refused', fix: 'copy it again', durationMs: 3 },
      ]),
    );
    expect(text).toBe(
      [
        'ok    config         valid',
        'warn  service.clock  drifting',
        '                     fix: sync it',
        'skip  redis.server   no redis',
        'fail  service.token  refused',
        '                     fix: copy it again',
        '',
        '4 checks: 1 ok, 1 warn, 1 fail, 1 skipped',
        '',
      ].join('\n'),
    );
  });
});
