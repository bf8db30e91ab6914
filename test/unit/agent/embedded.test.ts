import { describe, expect, it } from 'vitest';
import { configWithShorthands } from '../../../src/agent/embedded.js';
import { ValidationError } from '../../../src/errors.js';

const TOKEN = 'aaa.bbb.ccc';
const bot = { any: 'bot' };

describe('the embedded shorthands', () => {
  it('puts token into service.token beside the other service settings', () => {
    expect(configWithShorthands({ token: TOKEN, config: { service: { v1: 'http://127.0.0.1:1/api/v1' } } }).service).toEqual({ v1: 'http://127.0.0.1:1/api/v1', token: TOKEN });
    expect(configWithShorthands({ token: TOKEN }).service).toEqual({ token: TOKEN });
  });

  it('accepts the token given twice with one value, and refuses two values', () => {
    expect(configWithShorthands({ token: TOKEN, config: { service: { token: TOKEN } } }).service?.token).toBe(TOKEN);
    expect(() => configWithShorthands({ token: TOKEN, config: { service: { token: 'x.y.z' } } })).toThrow(ValidationError);
    expect(() => configWithShorthands({ token: TOKEN, config: { service: { token: 'x.y.z' } } })).toThrow(/give the project token once/);
  });

  it('turns stats on when a bot is given, unless the config says otherwise', () => {
    expect(configWithShorthands({ token: TOKEN, discord: bot }).stats).toEqual({ enabled: true });
    expect(configWithShorthands({ token: TOKEN, discord: bot, config: { stats: { mode: 'patch' } } }).stats).toEqual({ mode: 'patch', enabled: true });
    expect(configWithShorthands({ token: TOKEN, discord: bot, config: { stats: { enabled: false } } }).stats).toEqual({ enabled: false });
    expect(configWithShorthands({ token: TOKEN }).stats).toBeUndefined();
  });
});
