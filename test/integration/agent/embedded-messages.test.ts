import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createListingAgent, type ListingAgent } from '../../../src/agent/agent.js';
import { createMemoryStore } from '../../../src/store/memory.js';
import { setupBot, startTestEmulator } from '../../helpers/emulator.js';
import { startFakeDiscordRest } from '../../helpers/fake-discord/index.js';

/**
 * An embedded agent reads its `config` and no environment variable, so what it says names the
 * option to set by its config path alone (issue 32, item 3): `set state.directory to ...`, never
 * `(LISTING_AGENT_STATE_DIRECTORY)`. The daemon's words, with the variable, are checked with the
 * CLI (test/integration/cli/).
 */

const agents: ListingAgent[] = [];
const blockers: Server[] = [];
afterEach(async () => {
  await Promise.all(agents.splice(0).map((agent) => agent.stop({ deadlineMs: 2_000 })));
  await Promise.all(blockers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

/** A port some other program holds. */
async function takenPort(): Promise<number> {
  const server = createServer();
  blockers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as { port: number }).port;
}

async function listing() {
  const emu = await startTestEmulator();
  const fx = setupBot(emu);
  return { emu, fx, service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 } };
}

/** An embedded agent (no `mode`), silent, its errors collected. */
function embedded(options: Parameters<typeof createListingAgent>[0]) {
  const agent = createListingAgent({ logger: false, reconnectDelaysMs: [60_000], ...options });
  agents.push(agent);
  const errors: Error[] = [];
  agent.on('error', (error) => errors.push(error));
  return { agent, errors };
}

describe('an embedded agent names what to set by its config path alone', () => {
  it('a state directory it cannot make: start() rejects naming state.directory, and once the way is clear a later start() starts', async () => {
    const { service } = await listing();
    const root = await mkdtemp(join(tmpdir(), 'la-embedded-messages-'));
    await writeFile(join(root, 'in-the-way'), 'a file where the state directory should go');
    const { agent } = embedded({ config: { service, health: { enabled: false }, state: { directory: join(root, 'in-the-way', 'state') } } });

    const refused = (await agent.start().then(() => undefined, (error: unknown) => error)) as Error;
    expect(refused).toMatchObject({ code: 'store', message: expect.stringContaining('— set state.directory to a directory') });
    expect(refused.message).not.toContain('LISTING_AGENT_');
    expect(agent.phase).toBe('idle');

    await rm(join(root, 'in-the-way'));
    await mkdir(join(root, 'in-the-way'));
    await agent.start();
    expect(agent.phase).toBe('running');
  });

  it('a push endpoint on a taken port: the error names stats.push.listen', async () => {
    const { service } = await listing();
    const port = await takenPort();
    const { errors } = embedded({
      config: { service, health: { enabled: false }, stats: { enabled: true, source: 'push', push: { key: 'embedded-messages-push-key-0123456789', listen: `127.0.0.1:${port}` } } },
      store: createMemoryStore(),
      autoStart: true,
    });
    await vi.waitFor(() => expect(errors.map((e) => e.message)).toContain(`push endpoint: 127.0.0.1:${port} is in use: set stats.push.listen to a free port or stop the other process`), { timeout: 10_000, interval: 20 });
  });

  it('a webhook receiver on a taken port: the error names webhooks.listen', async () => {
    const { service } = await listing();
    const port = await takenPort();
    const { agent, errors } = embedded({
      config: { service, health: { enabled: false }, webhooks: { enabled: true, listen: `127.0.0.1:${port}`, secrets: ['whs_embedded_messages_secret'] } },
      store: createMemoryStore(),
    });
    agent.on('vote', () => undefined);
    await agent.start();
    await vi.waitFor(() => expect(errors.map((e) => e.message)).toContain(`webhook receiver: 127.0.0.1:${port} is in use: set webhooks.listen to a free port or stop the other process`), { timeout: 10_000, interval: 20 });
  });

  it('a bot token Discord refuses: the stats readiness says to check discord.token', async () => {
    const { service } = await listing();
    const discord = await startFakeDiscordRest({ token: 'the-right-bot-token', approximateGuildCount: 5 });
    const { agent } = embedded({
      config: { service, health: { enabled: false }, discord: { token: 'a-wrong-bot-token', apiBaseUrl: discord.url }, stats: { enabled: true, source: 'discord-rest', rest: { shardCount: 1 } } },
      store: createMemoryStore(),
    });
    await agent.start();
    await vi.waitFor(() => expect(agent.readiness.snapshot().components.stats?.detail).toContain('check discord.token is the token of this bot'), { timeout: 10_000, interval: 20 });
    expect(agent.readiness.snapshot().components.stats?.detail).not.toContain('LISTING_AGENT_');
  });
});
