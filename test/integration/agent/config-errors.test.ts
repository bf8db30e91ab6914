import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, createListingAgent, type AgentConfigInput } from '../../../src/index.js';
import { parseConfig } from '../../../src/public/config.js';
import { runCliInProcess } from '../../helpers/cli.js';

/*
 * One voice for configuration (issue 32, items 5 to 7), the embedded road: createListingAgent
 * (and parseConfig) throw the CLI's ConfigError, listing every problem at once with its path and a
 * did-you-mean, the same list `listing-agent config check` prints for the same input; an embedded
 * agent's words name no LISTING_AGENT_* variable, which it never reads.
 */

const TOKEN = 'proj.SECRET-PROJECT-TOKEN.sig';
/** A Discord bot token's shape: the bot's user ID in base64, a timestamp, an HMAC. */
const DISCORD_TOKEN = `${Buffer.from('1087654321098765432').toString('base64').replace(/=+$/, '')}.GhIjKl.SECRET-discord-hmac-0123456789abcdef`;

/** What createListingAgent throws for these options: a ConfigError, as path: message lines. */
function refusal(options: Parameters<typeof createListingAgent>[0]): string[] {
  let thrown: unknown;
  try {
    createListingAgent(options);
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(ConfigError);
  const error = thrown as ConfigError;
  expect(error.reason).toBe('invalid');
  return error.problems.map((p) => `${p.path}: ${p.message}`);
}

/** The problems `listing-agent config check` prints for `config` as a file. */
async function configCheck(config: unknown): Promise<string[]> {
  const cwd = await mkdtemp(join(tmpdir(), 'la-config-errors-'));
  await writeFile(join(cwd, 'c.json'), JSON.stringify(config));
  const res = await runCliInProcess(['config', 'check', '-c', 'c.json'], { cwd });
  expect(res.code).toBe(1);
  return res.stderr.trim().split('\n').slice(1);
}

describe('createListingAgent refuses a configuration with a ConfigError', () => {
  it('lists the same problems as config check for the same input, with did-you-mean, not zod text', async () => {
    const config = { votes: { enable: true, pollInterval: 'soon' }, health: { listen: 'nowhere' }, log: { level: 'loud' } };
    const problems = refusal({ token: TOKEN, config: config as unknown as AgentConfigInput });
    expect(problems).toEqual([
      'votes.pollInterval: must be a duration such as 30s, 5m, 12h or 1h30m',
      'votes.enable: unknown field (did you mean enabled?)',
      'health.listen: must be host:port (for example 127.0.0.1:9464) or a port',
      'log.level: must be one of fatal, error, warn, info, debug, trace, silent',
    ]);
    expect(await configCheck({ service: { token: TOKEN }, ...config })).toEqual(problems);
    expect(() => parseConfig({ service: { token: TOKEN }, ...config } as never)).toThrow(ConfigError);
  });

  it('refuses a shared secret under 16 characters (push key, v0 authorization, admin token), saying why, in the same words', async () => {
    const config = {
      stats: { enabled: true, source: 'push', push: { key: 'fifteen-chars-k' } },
      webhooks: { enabled: true, legacyAuthorization: 'fifteen-chars-v' },
      health: { adminToken: 'fifteen-chars-a' },
    };
    const why =
      'must be at least 16 characters: whoever reaches its port can try values, and a shorter one can be guessed ' +
      '(make one with: openssl rand -hex 32)';
    const problems = refusal({ token: TOKEN, config: config as AgentConfigInput });
    expect(problems).toEqual([`stats.push.key: ${why}`, `webhooks.legacyAuthorization: ${why}`, `health.adminToken: ${why}`]);
    expect(await configCheck({ service: { token: TOKEN }, ...config })).toEqual(problems);
    expect(JSON.stringify(problems)).not.toContain('fifteen-chars');
    // 16 characters are enough.
    const enough = { ...config, stats: { enabled: true, source: 'push', push: { key: 'sixteen-chars-k!' } } };
    expect(refusal({ token: TOKEN, config: enough as AgentConfigInput })).toEqual(problems.slice(1));
  });

  it('names the options of createListingAgent, not the variables the daemon reads', () => {
    expect(refusal({ config: {} })).toEqual(['service.token: missing (required): pass the project token as `token` to createListingAgent, or set service.token']);
    const push = refusal({ token: TOKEN, countSource: { description: 'mine', read: async () => ({ ready: false, reason: 'x' }) }, config: { stats: { enabled: true, source: 'push' } } });
    expect(push).toEqual(['stats.push.key: the push source needs a shared key: set stats.push.key and send it from the bot']);
  });

  it('lists every problem a capability would refuse, all at once, before anything starts', () => {
    const problems = refusal({
      token: TOKEN,
      config: {
        stats: { enabled: true },
        commands: { enabled: true },
        votes: { enabled: true, hooks: [{ url: 'http://127.0.0.1:1/a', name: 'pay' }, { url: 'http://127.0.0.1:1/b', name: 'pay' }] },
        webhooks: { enabled: true, secrets: ['whs_x'], listen: '127.0.0.1:9464' },
      },
    });
    expect(problems).toEqual([
      'stats.source: is embedded, but no bot was given: pass your discord.js Client, ShardingManager or ClusterManager, or your Eris or Oceanic.js Client, as `discord` to createListingAgent (or counts of your own as `countSource`), or set stats.source to discord-rest or push',
      'commands.source: is discord, but there is no way to read the commands: pass your discord.js, Eris or Oceanic.js Client as `discord` to createListingAgent, set discord.token, or use source file',
      'votes.hooks[1].name: "pay" is already the name of votes.hooks[0]: give each hook a unique name',
      'webhooks.listen: 127.0.0.1:9464 is where health.listen listens too: give each server a port of its own',
    ]);
  });
});

describe('a token or URL the listing service must not get is refused before anything is sent (embedded)', () => {
  it('refuses a Discord bot token, a Bearer prefix, plain http to another machine, and a ${VAR} left in a secret', () => {
    expect(refusal({ token: DISCORD_TOKEN })).toEqual([
      "service.token: is a Discord bot token (its first part is the bot's user ID), not the project token, so it is not sent to the listing service: copy the project token from the project's Integrations and API settings on the listing (the bot token belongs in discord.token)",
    ]);
    expect(refusal({ token: `Bearer ${TOKEN}` })).toEqual([
      'service.token: starts with "Bearer ": give the project token alone, without the prefix (the agent adds it where the service wants it)',
    ]);
    expect(refusal({ token: TOKEN, config: { service: { v1: 'http://listing.example/api/v1' } } })).toEqual([
      'service.v1: is plain http to another machine: the project token would cross the network unencrypted; use https (plain http only on 127.0.0.1, localhost or [::1], for a local emulator)',
    ]);
    expect(refusal({ token: TOKEN, config: { votes: { enabled: true, hooks: [{ url: 'http://127.0.0.1:1/pay', secret: '${REWARD_HOOK_SECRET}' }] } } })).toEqual([
      'votes.hooks[0].secret: holds ${REWARD_HOOK_SECRET}, which is not replaced here: only a config file read by loadConfig or listing-agent run has its ${VAR}s replaced; in code, pass the value of REWARD_HOOK_SECRET itself',
    ]);
  });

  it('never quotes the token it refuses', () => {
    for (const token of [DISCORD_TOKEN, `Bearer ${TOKEN}`]) {
      for (const line of refusal({ token })) expect(line).not.toContain('SECRET');
    }
  });
});
