import { describe, expect, it } from 'vitest';
import { daemonHookOptions, hookEnvironment, hookParentEnvironment } from '../../../src/cli/hook-environment.js';

const ENV = {
  PATH: '/usr/bin',
  HOME: '/home/bot',
  LANG: 'C.UTF-8',
  LISTING_AGENT_SERVICE_TOKEN: 'a.b.c',
  LISTING_AGENT_LOG_LEVEL: 'debug',
  LISTING_OAUTH_ACCESS_TOKEN: 'oauth-token',
  LISTING_PROJECT_TOKEN: 'x.y.z',
  REWARD_DB_URL: 'postgres://db',
  AWS_SECRET_ACCESS_KEY: 'aws-secret',
  EMPTY: undefined,
};
const READ = ['LISTING_PROJECT_TOKEN', 'LISTING_AGENT_SERVICE_TOKEN'];

describe("the environment of the daemon's exec hooks", () => {
  it('is PATH, HOME, LANG and TZ (when set) and nothing else', () => {
    expect(hookEnvironment(ENV, READ)).toEqual({ PATH: '/usr/bin', HOME: '/home/bot', LANG: 'C.UTF-8' });
    // A base variable the config read is left out too.
    expect(hookEnvironment(ENV, [...READ, 'HOME'])).toEqual({ PATH: '/usr/bin', LANG: 'C.UTF-8' });
  });

  it("copies listed names from the environment less the agent's own variables", () => {
    expect(hookParentEnvironment(ENV, READ)).toEqual({ PATH: '/usr/bin', HOME: '/home/bot', LANG: 'C.UTF-8', REWARD_DB_URL: 'postgres://db', AWS_SECRET_ACCESS_KEY: 'aws-secret' });
    expect(daemonHookOptions({ env: ENV, cwd: '/srv' }, READ)).toEqual({ env: hookEnvironment(ENV, READ), parentEnv: hookParentEnvironment(ENV, READ), cwd: '/srv' });
  });
});
