import { describe, expect, it } from 'vitest';
import { describeTokenSource } from '../../../src/cli/token-source.js';

const TOKEN = 'aaaa.bbbb.cccc';

describe('describeTokenSource: where service.token came from, never its value', () => {
  it('names the variable, and the .env file when the environment did not set it', () => {
    expect(describeTokenSource({ env: ['LISTING_AGENT_SERVICE_TOKEN'], file: '/etc/la/config.json' }, { LISTING_AGENT_SERVICE_TOKEN: TOKEN }, TOKEN)).toBe('the LISTING_AGENT_SERVICE_TOKEN variable');
    expect(describeTokenSource({ env: ['LISTING_AGENT_SERVICE_TOKEN'], dotenv: '/srv/bot/.env' }, {}, TOKEN)).toBe('the LISTING_AGENT_SERVICE_TOKEN variable (set in /srv/bot/.env)');
  });

  it('names the config file, and the ${VAR} of the file that holds it', () => {
    expect(describeTokenSource({ env: [], file: '/etc/la/config.json' }, {}, TOKEN)).toBe('the config file /etc/la/config.json');
    expect(describeTokenSource({ env: ['LISTING_AGENT_LOG_LEVEL', 'MY_TOKEN', 'OTHER'], file: '/etc/la/config.json' }, { MY_TOKEN: TOKEN, OTHER: 'x' }, TOKEN)).toBe(
      'the MY_TOKEN variable, through ${MY_TOKEN} in the config file /etc/la/config.json',
    );
  });

  it('never contains the token', () => {
    for (const sources of [{ env: ['LISTING_AGENT_SERVICE_TOKEN'] }, { env: ['T'], file: 'c.json' }, { env: [] }]) {
      expect(describeTokenSource(sources, { LISTING_AGENT_SERVICE_TOKEN: TOKEN, T: TOKEN }, TOKEN)).not.toContain(TOKEN);
    }
  });
});
