import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/config/errors.js';
import { buildConfig } from '../../../src/config/loader.js';
import { didYouMean, formatPath } from '../../../src/config/problems.js';
import { TOKEN, json } from './files.js';

function problems(config: unknown, env: Record<string, string> = {}): string[] {
  try {
    buildConfig({ file: { name: 'c.json', text: json(config) }, env });
  } catch (error) {
    if (error instanceof ConfigError) return error.problems.map((p) => `${p.path}: ${p.message}`);
    throw error;
  }
  return [];
}

describe('config problems', () => {
  it('are all listed at once, with bracketed array indexes', () => {
    expect(
      problems({
        service: { token: TOKEN },
        votes: { hooks: [{ url: 'http://127.0.0.1:1/ok' }, { url: 'not a url' }, {}] },
        stats: { interval: 5, enabled: 'yes' },
        log: { level: 'loud' },
      }),
    ).toEqual([
      'stats.enabled: must be a boolean (got a string)',
      'stats.interval: must be a string (got a number)',
      'votes.hooks[1].url: must be an absolute URL (http or https)',
      'votes.hooks[2].url: missing (required): set it in the config file',
      'log.level: must be one of fatal, error, warn, info, debug, trace, silent',
    ]);
  });

  it('name an unknown field with a did-you-mean from the schema', () => {
    expect(problems({ service: { token: TOKEN, tokn: 'x' }, votes: { poll_interval: '1m', hooks: [{ url: 'http://x/', timout: '1s' }] }, helth: {}, zzz: 1 })).toEqual([
      'service.tokn: unknown field (did you mean token?)',
      'votes.hooks[0].timout: unknown field (did you mean timeout?)',
      'votes.poll_interval: unknown field (did you mean pollInterval?)',
      'helth: unknown field (did you mean health?)',
      'zzz: unknown field (known fields: $schema, service, discord, stats, commands, votes, webhooks, state, health, log)',
    ]);
  });

  it('say how to set a missing required field', () => {
    expect(problems({})).toEqual(['service.token: missing (required): set it in the config file or with LISTING_AGENT_SERVICE_TOKEN']);
  });

  it('include the rules the schema adds across fields', () => {
    expect(problems({ service: { token: TOKEN }, webhooks: { enabled: true } })).toEqual([
      'webhooks.secrets: the receiver is enabled but has no secret: add a webhook secret (whs_...) or legacyAuthorization',
    ]);
  });

  it('never quote a value, so a secret in the wrong place does not leak', () => {
    const found = problems({ service: { token: 'SECRET-WITHOUT-DOTS' }, webhooks: { secrets: 'whs_SECRET', legacyAuthorization: 42 } });
    expect(found).toEqual([
      "service.token: must be a project token (three parts separated by dots): copy it from the project's Integrations and API settings on the listing",
      'webhooks.secrets: must be an array (got a string)',
      'webhooks.legacyAuthorization: must be a string (got a number)',
    ]);
    expect(found.join('\n')).not.toContain('SECRET');
  });

  it('make a one-line summary', () => {
    const one = (() => {
      try {
        buildConfig({ env: {} });
      } catch (error) {
        return (error as ConfigError).summary;
      }
    })();
    expect(one).toBe('invalid configuration: service.token: missing (required): set it in the config file or with LISTING_AGENT_SERVICE_TOKEN');
    try {
      buildConfig({ env: { LISTING_AGENT_LOG_LEVEL: 'x', LISTING_AGENT_LOG_FORMAT: 'y', LISTING_AGENT_STATS_INTERVAL: 'z', LISTING_AGENT_VOTES_LOOKBACK: 'w' } });
    } catch (error) {
      const { summary, code } = error as ConfigError;
      expect(code).toBe('config');
      expect(summary).not.toContain('\n');
      expect(summary).toMatch(/^invalid configuration, 5 problems: .*; and 2 more \(listing-agent config check lists them all\)$/);
    }
  });

  it('formatPath and didYouMean', () => {
    expect(formatPath(['votes', 'hooks', 1, 'url'])).toBe('votes.hooks[1].url');
    expect(formatPath([])).toBe('');
    expect(didYouMean('Token', ['token', 'v1'])).toBe('token');
    expect(didYouMean('colour', ['level', 'format'])).toBeUndefined();
  });
});
