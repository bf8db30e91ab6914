import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Events, GatewayIntentBits } from 'discord.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createListingAgent, type ListingAgent } from '../../../src/agent/agent.js';
import { setupBot, startTestEmulator } from '../../helpers/emulator.js';
import { startFakeDiscord } from '../../helpers/fake-discord/index.js';

/**
 * The README's embedded example: `createListingAgent({ token, discord: client })` and nothing else
 * (no start, no stop, no stats setting). Only the service's URLs and the state directory point at
 * the test's emulator and a temp folder; the rest is the defaults a bot owner gets.
 */

const clients: Client[] = [];
const agents: ListingAgent[] = [];
afterEach(async () => {
  await Promise.all(agents.splice(0).map((agent) => agent.stop()));
  await Promise.all(clients.splice(0).map((client) => client.destroy()));
});

async function botAndListing(guilds: number) {
  const fake = await startFakeDiscord({ shardCount: 1, guilds });
  const client = new Client({
    intents: [GatewayIntentBits.Guilds],
    rest: { api: fake.restUrl },
    ws: { buildIdentifyThrottler: () => ({ waitForIdentify: async () => undefined }) },
  });
  clients.push(client);
  const emu = await startTestEmulator();
  const fx = setupBot(emu);
  const directory = await mkdtemp(join(tmpdir(), 'la-embedded-'));
  const where = { service: { v1: emu.urls.v1, v0: emu.urls.v0 }, health: { enabled: false }, state: { directory } };
  return { fake, client, emu, fx, directory, where };
}

describe('embedded in three lines: createListingAgent({ token, discord: client })', () => {
  it('starts when the client is ready, posts its counts, and stops (state flushed) when the client is destroyed', async () => {
    const { fake, client, emu, fx, directory, where } = await botAndListing(5);
    const agent = createListingAgent({ token: fx.projectToken, discord: client, config: where });
    agents.push(agent);

    // Not ready yet: nothing starts, so nothing is read from an empty cache.
    await new Promise((resolve) => setImmediate(resolve));
    expect(agent.phase).toBe('idle');

    await client.login(fake.token);
    await vi.waitFor(() => expect(emu.admin.metrics(fx.projectId).map((m) => m.metrics.server_count)).toEqual([5]), { timeout: 15_000, interval: 50 });
    expect(agent.config.stats.enabled).toBe(true);

    await client.destroy();
    expect(agent.phase).toBe('stopped');
    const state = JSON.parse(await readFile(join(directory, 'state.json'), 'utf8')) as { data: Record<string, { stoppedAt?: string }> };
    expect(state.data['agent:lastRun']?.stoppedAt).toEqual(expect.any(String));
    // The lock is released with the stop.
    await expect(readFile(join(directory, 'state.lock'), 'utf8')).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('starts at once with a client that is already ready, and a manual start() shares its promise', async () => {
    const { fake, client, emu, fx, where } = await botAndListing(3);
    const ready = new Promise((resolve) => client.once(Events.ClientReady, resolve));
    await client.login(fake.token);
    await ready;

    const agent = createListingAgent({ token: fx.projectToken, discord: client, config: where });
    agents.push(agent);
    // The old README's line, kept by many bots: it must not fail beside the automatic start.
    await agent.start();
    await vi.waitFor(() => expect(emu.admin.metrics(fx.projectId).map((m) => m.metrics.server_count)).toEqual([3]), { timeout: 15_000, interval: 50 });
    expect(agent.phase).toBe('running');
  });

  it('leaves the start to the bot with autoStart: false, and stats off when the config says so', async () => {
    const { fake, client, fx, where } = await botAndListing(2);
    const agent = createListingAgent({ token: fx.projectToken, discord: client, autoStart: false, config: { ...where, stats: { enabled: false } } });
    agents.push(agent);
    const ready = new Promise((resolve) => client.once(Events.ClientReady, resolve));
    await client.login(fake.token);
    await ready;
    // An agent following the bot would have started within these turns (see the test above).
    for (let turn = 0; turn < 5; turn += 1) await new Promise((resolve) => setImmediate(resolve));
    expect(agent.phase).toBe('idle');
    expect(agent.config.stats.enabled).toBe(false);
  });
});
