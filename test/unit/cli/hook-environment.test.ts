import { describe, expect, it } from 'vitest';
import { hookEnvironment } from '../../../src/cli/commands/run.js';

describe('the environment exec hooks inherit from the daemon', () => {
  it('keeps the ordinary variables and hides every variable the config was built from', () => {
    const env = {
      PATH: '/usr/bin',
      HOME: '/home/bot',
      LISTING_AGENT_SERVICE_TOKEN: 'a.b.c',
      LISTING_AGENT_LOG_LEVEL: 'debug',
      LISTING_PROJECT_TOKEN: 'x.y.z',
      REWARD_DB_URL: 'postgres://db',
      EMPTY: undefined,
    };
    expect(hookEnvironment(env, ['LISTING_PROJECT_TOKEN', 'LISTING_AGENT_SERVICE_TOKEN'])).toEqual({
      PATH: '/usr/bin',
      HOME: '/home/bot',
      REWARD_DB_URL: 'postgres://db',
    });
  });
});
