import { Client as ErisClient } from 'eris';
import { Client as OceanicClient } from 'oceanic.js';
import { describe, expect, it } from 'vitest';
import { commandsSourceFor } from '../../../src/commands/configured-source.js';
import { createErisCommandsSource, createOceanicCommandsSource } from '../../../src/commands/sources/eris-oceanic.js';
import { buildConfig } from '../../../src/config/loader.js';

const TOKEN = 'MTIz.secret-bot-token.xyz';
const COMMANDS = [{ type: 1, name: 'ping', description: 'Pong', name_localizations: { de: 'klingeln' } }];

/** A failed request as each library rejects it (Eris: `res.statusCode`; Oceanic.js: `status`). */
function failure(message: string, fields: Record<string, unknown>): Error {
  return Object.assign(new Error(message), fields);
}

describe('commands through an Eris Client', () => {
  it('asks its request handler for the global commands with localizations, once ready', async () => {
    const asked: unknown[][] = [];
    const client = {
      ready: false,
      application: undefined as { id: string } | undefined,
      requestHandler: { request: async (...args: unknown[]) => (asked.push(args), COMMANDS) },
    };
    const source = createErisCommandsSource(client);
    expect(await source.load()).toEqual({ ok: false, reason: 'the Eris Client is not ready yet: its commands can be read once it has connected' });
    client.ready = true;
    client.application = { id: '300000000000000001' };
    expect(await source.load()).toEqual({ ok: true, commands: COMMANDS });
    expect(asked).toEqual([['GET', '/applications/300000000000000001/commands', true, { with_localizations: true }]]);
    expect(source.description).toBe('Eris Client (global commands)');
  });

  it('explains a refused token without repeating it, and an answer that is not a list', async () => {
    const client = {
      ready: true,
      application: { id: '1' },
      _token: `Bot ${TOKEN}`,
      requestHandler: { request: async () => Promise.reject(failure(`401: Unauthorized (token ${TOKEN})`, { res: { statusCode: 401 } })) },
    };
    const load = await createErisCommandsSource(client).load();
    expect(load).toEqual({ ok: false, reason: expect.stringContaining('Eris could not fetch the application\'s commands (401: Unauthorized') });
    expect(load.ok ? '' : load.reason).toMatch(/check the token the Client connected with$/);
    expect(JSON.stringify(load)).not.toContain('secret-bot-token');

    client.requestHandler.request = async () => ({ message: 'no' }) as never;
    expect(await createErisCommandsSource(client).load()).toEqual({ ok: false, reason: 'Eris answered something that is not a list of commands' });
  });
});

describe('commands through an Oceanic.js Client', () => {
  it('reads nothing before READY (its application getter throws) and asks rest.authRequest after', async () => {
    const real = new OceanicClient({ auth: `Bot ${TOKEN}` });
    expect(await createOceanicCommandsSource(real).load()).toEqual({ ok: false, reason: 'the Oceanic.js Client is not ready yet: its commands can be read once it has connected' });

    const asked: { method: string; path: string; query?: URLSearchParams }[] = [];
    const client = {
      ready: true,
      application: { id: '300000000000000001' },
      options: { auth: `Bot ${TOKEN}` },
      rest: { authRequest: async (options: (typeof asked)[number]) => (asked.push(options), COMMANDS) },
    };
    expect(await createOceanicCommandsSource(client).load()).toEqual({ ok: true, commands: COMMANDS });
    expect(asked.map((o) => [o.method, o.path, o.query?.toString()])).toEqual([['GET', '/applications/300000000000000001/commands', 'with_localizations=true']]);

    client.rest.authRequest = async () => Promise.reject(failure(`403 on ${TOKEN}`, { status: 403 }));
    const refused = await createOceanicCommandsSource(client).load();
    expect(refused).toEqual({ ok: false, reason: expect.stringMatching(/^Oceanic\.js could not fetch .*check the token the Client connected with$/) });
    expect(JSON.stringify(refused)).not.toContain('secret-bot-token');
  });
});

describe('commandsSourceFor picks the source by the shape of the bot', () => {
  it('reads the commands through an Eris or Oceanic.js Client given as discord', () => {
    const { config } = buildConfig({ file: { name: 'config.json', text: JSON.stringify({ service: { token: 'a.b.c' }, commands: { enabled: true } }) }, env: {} });
    expect(commandsSourceFor(config, { discord: new ErisClient('Bot x', { intents: ['guilds'] }) }).description).toBe('Eris Client (global commands)');
    expect(commandsSourceFor(config, { discord: new OceanicClient({ auth: 'Bot x' }) }).description).toBe('Oceanic.js Client (global commands)');
  });
});
