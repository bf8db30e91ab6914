import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createListingAgent, type ListingAgent } from '../../../src/agent/agent.js';
import type { CommandSyncFailure, CommandSyncResult } from '../../../src/commands/types.js';
import type { StateStore } from '../../../src/store/types.js';
import { createMemoryStore } from '../../../src/store/memory.js';
import { runCliInProcess } from '../../helpers/cli.js';
import { createFakeClock } from '../../helpers/client.js';
import { setupBot, startTestEmulator, type TestEmulator } from '../../helpers/emulator.js';
import { startFakeDiscordRest } from '../../helpers/fake-discord/index.js';

const PING = { name: 'ping', description: 'Replies with pong' };
const VOTE = { name: 'vote', description: 'Vote for the bot', description_localizations: { de: 'Stimme ab' } };

const commandPuts = (emu: TestEmulator) => emu.admin.requests().filter((r) => r.method === 'PUT' && r.path.endsWith('/commands'));

/** Starts an agent syncing `commands`, waits for its first sync, and stops it. */
async function startOnce(emu: TestEmulator, token: string, commands: unknown[], store: StateStore, clock = createFakeClock()) {
  const agent: ListingAgent = createListingAgent({
    config: { service: { token, v1: emu.urls.v1, v0: emu.urls.v0 }, health: { enabled: false }, commands: { enabled: true } },
    commands,
    store,
    transport: { clock },
  });
  const outcome = new Promise<CommandSyncResult | CommandSyncFailure>((resolve) => {
    agent.once('commandsSynced', resolve);
    agent.once('commandsSyncFailed', resolve);
  });
  await agent.start();
  const result = await outcome;
  await agent.stop();
  return result;
}

describe('commands sync through the agent', () => {
  it('syncs on first start, sends nothing on an unchanged restart, and syncs a changed description once', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const store = createMemoryStore();

    const first = (await startOnce(emu, fx.projectToken, [PING, VOTE], store)) as CommandSyncResult;
    expect(first).toMatchObject({ skipped: false, count: 2, reason: 'start', diff: { added: ['ping', 'vote'] } });
    expect(emu.admin.commands(fx.projectId)).toEqual([
      { name: 'ping', description: 'Replies with pong', type: 1 },
      { name: 'vote', description: 'Vote for the bot', description_localizations: { de: 'Stimme ab' }, type: 1 },
    ]);
    expect(commandPuts(emu)).toHaveLength(1);

    // The same commands, written differently (key order, an explicit type 1): nothing is sent.
    const again = (await startOnce(emu, fx.projectToken, [{ type: 1, description: 'Vote for the bot', name: 'vote', description_localizations: { de: 'Stimme ab' } }, PING], store)) as CommandSyncResult;
    expect(again).toMatchObject({ skipped: true, count: 2 });
    expect(commandPuts(emu)).toHaveLength(1);

    const changed = (await startOnce(emu, fx.projectToken, [PING, { ...VOTE, description: 'Vote for us' }], store)) as CommandSyncResult;
    expect(changed).toMatchObject({ skipped: false, diff: { changed: [{ key: 'vote', fields: ['description'] }] } });
    expect(commandPuts(emu)).toHaveLength(2);
    expect(((await startOnce(emu, fx.projectToken, [PING, { ...VOTE, description: 'Vote for us' }], store)) as CommandSyncResult).skipped).toBe(true);
    expect(commandPuts(emu)).toHaveLength(2);
  });

  it('clears the listing with an empty command list', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const store = createMemoryStore();
    await startOnce(emu, fx.projectToken, [PING], store);
    const cleared = (await startOnce(emu, fx.projectToken, [], store)) as CommandSyncResult;
    expect(cleared).toMatchObject({ skipped: false, count: 0, diff: { removed: ['ping'] } });
    expect(emu.admin.commands(fx.projectId)).toEqual([]);
  });

  it('refuses invalid commands before sending, naming the command and the field, and keeps running', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const failure = (await startOnce(emu, fx.projectToken, [PING, { name: 'Bad Name', description: 'x' }], createMemoryStore())) as CommandSyncFailure;
    expect(failure.error.message).toMatch(/\[1\]\.name/);
    expect(commandPuts(emu)).toHaveLength(0);
  });

  it('retries a 429 after its Retry-After', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const clock = createFakeClock();
    emu.admin.injectFault({ method: 'PUT', path: '/api/v1/projects/@me/commands', status: 429, retry_after: 7 });
    const result = (await startOnce(emu, fx.projectToken, [PING], createMemoryStore(), clock)) as CommandSyncResult;
    expect(result.skipped).toBe(false);
    expect(clock.sleeps).toEqual([7_000]);
    expect(commandPuts(emu).map((r) => r.status)).toEqual([429, 204]);
  });

  it('skips a project that is not a chat-platform bot with one clear line, sending nothing', async () => {
    const emu = await startTestEmulator();
    const owner = emu.admin.createUser({ username: 'o' });
    const server = emu.admin.createProject({ platform: 'discord', type: 'server', owner_user_id: owner.id });
    const result = (await startOnce(emu, server.project_token, [PING], createMemoryStore())) as CommandSyncResult;
    expect(result.skipped).toBe(true);
    expect(commandPuts(emu)).toHaveLength(0);
  });
});

describe('listing-agent commands diff / sync (Discord as the source)', () => {
  it('diffs against the last synced set and syncs only when something changed', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const discord = await startFakeDiscordRest({ applicationId: fx.platformId });
    let commands: unknown[] = [
      { id: '1', application_id: fx.platformId, version: '1', type: 1, name: 'ping', description: 'Replies with pong', name_localizations: null, description_localizations: null },
    ];
    discord.route('GET', `/applications/${fx.platformId}/commands`, () => ({ status: 200, body: commands }));
    const dir = await mkdtemp(join(tmpdir(), 'la-commands-'));
    await writeFile(join(dir, 'config.json'), JSON.stringify({
      service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 },
      discord: { token: discord.state.token, apiBaseUrl: discord.url },
      commands: { enabled: true },
    }));
    const cli = (...args: string[]) => runCliInProcess(['commands', ...args, '--config', 'config.json'], { cwd: dir });

    const before = await cli('diff');
    expect(before.code).toBe(0);
    expect(before.stdout).toContain('No sync recorded yet');
    expect(before.stdout).toContain('+ ping');

    const synced = await cli('sync');
    expect(synced.stdout).toContain('Synced 1 commands');
    expect(discord.requests.some((r) => r.path === `/applications/${fx.platformId}/commands`)).toBe(true);
    expect((await cli('sync')).stdout).toContain('Unchanged since the last sync');
    expect(commandPuts(emu)).toHaveLength(1);
    expect((await cli('sync', '--force')).stdout).toContain('Synced 1 commands');
    expect(commandPuts(emu)).toHaveLength(2);

    commands = [...commands, { id: '2', type: 1, name: 'vote', description: 'Vote', version: '2' }];
    const after = await cli('diff');
    expect(after.stdout).toContain('Changes since the last sync');
    expect(after.stdout).toContain('+ vote');

    const unknown = await runCliInProcess(['commands', 'push']);
    expect(unknown.code).toBe(2);
  });

  it('says in one line when Discord refuses the bot token', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const discord = await startFakeDiscordRest({ applicationId: fx.platformId });
    const dir = await mkdtemp(join(tmpdir(), 'la-commands-'));
    await writeFile(join(dir, 'config.json'), JSON.stringify({
      service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 },
      discord: { token: 'wrong-token', apiBaseUrl: discord.url },
    }));
    const res = await runCliInProcess(['commands', 'sync', '--config', 'config.json'], { cwd: dir });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('discord.token');
    expect(res.stderr).not.toContain('wrong-token');
    expect(res.stderr.trim().split('\n')).toHaveLength(1);
  });
});
