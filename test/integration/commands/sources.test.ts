import { once } from 'node:events';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Events, GatewayIntentBits } from 'discord.js';
import { afterEach, describe, expect, it } from 'vitest';
import { normaliseCommands, type ListingCommand } from '../../../src/commands/normalise.js';
import { createClientCommandsSource } from '../../../src/commands/sources/discord-client.js';
import { createDiscordCommandsSource, type DiscordCommandsSourceOptions } from '../../../src/commands/sources/discord-rest.js';
import { createFileCommandsSource } from '../../../src/commands/sources/file.js';
import { createStaticCommandsSource } from '../../../src/commands/sources/static.js';
import type { CommandLoad } from '../../../src/commands/types.js';
import { startFakeDiscord, startFakeDiscordRest, type FakeDiscordRest, type FakeDiscordRestState } from '../../helpers/fake-discord/index.js';

const TOKEN = 'fake-bot-token-Mz1.abc.def';
const APP_ID = '300000000000000001';

/** The bot's commands as Discord answers `GET /applications/{id}/commands?with_localizations=true`. */
const discordCommands = [
  {
    id: '1250000000000000001',
    application_id: APP_ID,
    version: '1250000000000000099',
    default_permission: true,
    default_member_permissions: null,
    type: 1,
    name: 'ping',
    name_localizations: { de: 'klingeln' },
    description: 'Replies with pong',
    description_localizations: {},
    dm_permission: true,
    contexts: null,
    integration_types: [0],
    nsfw: false,
  },
  {
    id: '1250000000000000002',
    application_id: APP_ID,
    version: '1250000000000000098',
    default_permission: true,
    default_member_permissions: '32',
    type: 1,
    name: 'vote',
    description: 'Vote for the bot',
    options: [
      { type: 3, name: 'site', description: 'Where to vote', required: true, choices: [{ name: 'Top', value: 'top' }, { name: 'Alpha', value: 'alpha' }] },
      { type: 4, name: 'times', description: 'How many times', min_value: 1 },
    ],
    integration_types: [0],
    nsfw: false,
  },
  { id: '1250000000000000003', application_id: APP_ID, version: '1250000000000000097', type: 3, name: 'Report', description: '', integration_types: [0], nsfw: false },
];

/** The same commands as a bot author writes them. */
const handWritten = [
  { name: 'ping', description: 'Replies with pong', name_localizations: { de: 'klingeln' }, integration_types: [0] },
  {
    name: 'vote',
    description: 'Vote for the bot',
    default_member_permissions: '32',
    integration_types: [0],
    options: [
      { type: 3, name: 'site', description: 'Where to vote', required: true, choices: [{ name: 'Top', value: 'top' }, { name: 'Alpha', value: 'alpha' }] },
      { type: 4, name: 'times', description: 'How many times', min_value: 1 },
    ],
  },
  { type: 3, name: 'Report', integration_types: [0] },
];

function normalised(raw: unknown[]): ListingCommand[] {
  const result = normaliseCommands(raw);
  if (!result.ok) throw new Error(JSON.stringify(result.issues));
  return result.commands;
}

function loaded(load: CommandLoad): unknown[] {
  if (!load.ok) throw new Error(`expected commands, got: ${load.reason}`);
  return load.commands;
}

/** Answers the commands route and remembers each request's query. */
function serveCommands(fake: FakeDiscordRest, appId = APP_ID, body: unknown = discordCommands) {
  const queries: string[] = [];
  fake.route('GET', `/applications/${appId}/commands`, (req: IncomingMessage) => {
    queries.push(new URL(req.url ?? '/', 'http://fake').search);
    return { status: 200, body };
  });
  return queries;
}

async function restSetup(state: Partial<FakeDiscordRestState> = {}, options: Partial<DiscordCommandsSourceOptions> = {}) {
  const fake = await startFakeDiscordRest({ token: TOKEN, applicationId: APP_ID, ...state });
  const queries = serveCommands(fake);
  const clock = { t: 1_700_000_000_000 };
  const source = createDiscordCommandsSource({ token: TOKEN, apiBaseUrl: fake.url, now: () => clock.t, ...options });
  return { fake, queries, clock, source };
}

const paths = (fake: FakeDiscordRest) => fake.requests.map((r) => `${r.status} ${r.path}`);

describe('commands source: Discord REST', () => {
  it('reads the global commands with localizations, the application ID from /applications/@me, and normalises them', async () => {
    const { fake, queries, source } = await restSetup();
    const commands = loaded(await source.load());
    expect(paths(fake)).toEqual(['200 /applications/@me', `200 /applications/${APP_ID}/commands`]);
    expect(queries).toEqual(['?with_localizations=true']);
    expect(fake.requests.every((r) => r.authorization === `Bot ${TOKEN}`)).toBe(true);
    expect(normalised(commands)).toEqual(normalised(handWritten));
    expect(normaliseCommands(commands)).toMatchObject({ hash: (normaliseCommands(handWritten) as { hash: string }).hash });

    // The application ID is asked once.
    await source.load();
    expect(paths(fake).slice(2)).toEqual([`200 /applications/${APP_ID}/commands`]);
    expect(source.description).toBe("Discord REST API (global commands of the token's application)");
  });

  it('uses a configured application ID without asking /applications/@me, and says to check it on a 404', async () => {
    const { fake, source } = await restSetup({}, { applicationId: APP_ID, token: `Bot ${TOKEN}` });
    loaded(await source.load());
    expect(paths(fake)).toEqual([`200 /applications/${APP_ID}/commands`]);
    expect(source.description).toContain(`application ${APP_ID}`);

    const other = createDiscordCommandsSource({ token: TOKEN, apiBaseUrl: fake.url, applicationId: '399999999999999999' });
    const missing = await other.load();
    expect(missing).toEqual({ ok: false, reason: expect.stringContaining('check the application ID') });
  });

  it('answers a 401 with "check discord.token", never the token', async () => {
    const { source } = await restSetup({ token: 'another-token' });
    const result = await source.load();
    expect(result).toEqual({ ok: false, reason: expect.stringContaining('check discord.token') });
    expect(JSON.stringify(result)).not.toContain(TOKEN);
  });

  it('honours a 429: no request before retry_after has passed, then reads again', async () => {
    const { fake, clock, source } = await restSetup({ remaining: 0, resetAfterSeconds: 2 }, { applicationId: APP_ID });
    const limited = await source.load();
    expect(limited).toEqual({ ok: false, reason: expect.stringMatching(/rate limited by Discord .*429 with scope user.*2s/) });
    expect(fake.requests).toHaveLength(1);

    fake.state.remaining = 50;
    clock.t += 1_999;
    const waiting = await source.load();
    expect(waiting).toEqual({ ok: false, reason: expect.stringContaining('no request to GET /applications/{id}/commands for another') });
    expect(fake.requests).toHaveLength(1);

    clock.t += 1;
    expect(loaded(await source.load())).toHaveLength(3);
    expect(paths(fake)).toEqual([`429 /applications/${APP_ID}/commands`, `200 /applications/${APP_ID}/commands`]);
  });

  it('waits out X-RateLimit-Reset-After when X-RateLimit-Remaining reached 0', async () => {
    const { fake, clock, source } = await restSetup({ remaining: 1, resetAfterSeconds: 5 }, { applicationId: APP_ID });
    loaded(await source.load());
    expect(await source.load()).toEqual({ ok: false, reason: expect.stringContaining('X-RateLimit-Remaining reached 0') });
    expect(fake.requests).toHaveLength(1);
    fake.state.remaining = 50;
    clock.t += 5_000;
    loaded(await source.load());
    expect(fake.requests).toHaveLength(2);
  });

  it('explains an answer that is not a command array and an unreachable API, without throwing', async () => {
    const fake = await startFakeDiscordRest({ token: TOKEN });
    serveCommands(fake, APP_ID, { message: 'not a list' });
    const source = createDiscordCommandsSource({ token: TOKEN, apiBaseUrl: fake.url, applicationId: APP_ID });
    expect(await source.load()).toEqual({ ok: false, reason: expect.stringContaining('is not a JSON array') });

    const nowhere = createDiscordCommandsSource({ token: TOKEN, apiBaseUrl: 'http://127.0.0.1:1/api', applicationId: APP_ID, timeoutMs: 2_000 });
    expect(await nowhere.load()).toEqual({ ok: false, reason: expect.stringContaining('cannot reach Discord') });
  });

  it('refuses an empty token and a malformed application ID when created', () => {
    expect(() => createDiscordCommandsSource({ token: ' ' })).toThrow(/discord\.token/);
    expect(() => createDiscordCommandsSource({ token: TOKEN, applicationId: 'my-bot' })).toThrow(/snowflake/);
  });
});

describe('commands source: file', () => {
  let dir: string;
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  const setup = async (files: Record<string, string>) => {
    dir = await mkdtemp(join(tmpdir(), 'listing-commands-'));
    for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
    return dir;
  };

  it('reads an array, or { commands: [...] }, relative to cwd', async () => {
    const cwd = await setup({ 'a.json': JSON.stringify(discordCommands, null, 2), 'b.json': JSON.stringify({ commands: handWritten }) });
    const a = createFileCommandsSource({ path: 'a.json', cwd });
    const b = createFileCommandsSource({ path: join(cwd, 'b.json'), cwd: '/elsewhere' });
    expect(normalised(loaded(await a.load()))).toEqual(normalised(loaded(await b.load())));
    expect(a.description).toBe('file a.json');
  });

  it('names the file when it is missing, a directory, or not valid JSON (line and column, no content quoted)', async () => {
    const cwd = await setup({ 'bad.json': '[\n  { "name": "ping", "token": "s3cr3t-value" "description": "x" }\n]' });
    await mkdir(join(cwd, 'dir.json'));
    expect(await createFileCommandsSource({ path: 'missing.json', cwd }).load()).toEqual({
      ok: false,
      reason: expect.stringMatching(/^the commands file missing\.json does not exist/),
    });
    expect(await createFileCommandsSource({ path: 'dir.json', cwd }).load()).toEqual({ ok: false, reason: expect.stringContaining('dir.json is a directory') });
    const bad = await createFileCommandsSource({ path: 'bad.json', cwd }).load();
    expect(bad).toEqual({ ok: false, reason: expect.stringMatching(/^the commands file bad\.json is not valid JSON at line 2, column \d+/) });
    expect(JSON.stringify(bad)).not.toContain('s3cr3t');
  });

  it('refuses JSON that is not a command array', async () => {
    const read = (text: string) => createFileCommandsSource({ path: 'c.json', cwd: '/x', readFile: async () => text }).load();
    expect(await read('{"name":"ping"}')).toEqual({ ok: false, reason: expect.stringContaining('c.json must hold a JSON array of command objects') });
    expect(await read('"ping"')).toEqual({ ok: false, reason: expect.stringContaining('(got a string)') });
    expect(await read('[]')).toEqual({ ok: true, commands: [] });
  });
});

describe('commands source: static', () => {
  it('gives the commands passed in code, a copy', async () => {
    const list: unknown[] = [...handWritten];
    const source = createStaticCommandsSource(list);
    list.push({ name: 'late', description: 'Late' });
    expect(loaded(await source.load())).toEqual(handWritten);
    expect(source.description).toBe('commands passed in code (3)');
  });
});

describe('commands source: discord.js Client against the fake gateway', () => {
  const clients: Client[] = [];
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.destroy()));
  });

  it('is not ready before login, then fetches the global commands with localizations', async () => {
    const fake = await startFakeDiscord({ shardCount: 1, guilds: 1 });
    // discord.js builds Routes.applicationCommands(client.application.id) with makeURLSearchParams.
    const queries = serveCommands(fake.rest);
    const client = new Client({
      intents: [GatewayIntentBits.Guilds],
      rest: { api: fake.restUrl },
      ws: { buildIdentifyThrottler: () => ({ waitForIdentify: async () => undefined }) },
    });
    clients.push(client);
    const source = createClientCommandsSource(client);
    expect(await source.load()).toEqual({ ok: false, reason: expect.stringContaining('not ready yet') });

    const ready = once(client, Events.ClientReady);
    await client.login(fake.token);
    await ready;
    const commands = loaded(await source.load());
    expect(queries).toEqual(['?with_localizations=true']);
    expect(normalised(commands)).toEqual(normalised(handWritten));
    // The structures' own toJSON() (camelCase) normalises the same way, for commands passed in code.
    const cached = [...client.application!.commands.cache.values()];
    expect(normalised(cached)).toEqual(normalised(handWritten));
  });

  it('reports a failed fetch without throwing', async () => {
    const fake = await startFakeDiscord({ shardCount: 1 });
    fake.rest.route('GET', `/applications/${APP_ID}/commands`, () => ({ status: 500, body: { message: 'boom', code: 0 } }));
    const client = new Client({
      intents: [GatewayIntentBits.Guilds],
      rest: { api: fake.restUrl, retries: 0 },
      ws: { buildIdentifyThrottler: () => ({ waitForIdentify: async () => undefined }) },
    });
    clients.push(client);
    const ready = once(client, Events.ClientReady);
    await client.login(fake.token);
    await ready;
    const result = await createClientCommandsSource(client).load();
    expect(result).toEqual({ ok: false, reason: expect.stringContaining('discord.js could not fetch') });
    expect(JSON.stringify(result)).not.toContain(fake.token);
  });
});
