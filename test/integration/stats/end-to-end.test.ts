import { once } from 'node:events';
import { Client, Events, GatewayIntentBits } from 'discord.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createListingAgent } from '../../../src/agent/agent.js';
import type { PostResult } from '../../../src/stats/events.js';
import { createMemoryStore } from '../../../src/store/memory.js';
import { setupBot, startTestEmulator } from '../../helpers/emulator.js';
import { startFakeDiscord } from '../../helpers/fake-discord/index.js';

const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.destroy()));
});

describe('stats end to end: a real discord.js Client, the agent, the emulator', () => {
  it('posts the true totals, and follows guilds joining and leaving', async () => {
    const fake = await startFakeDiscord({ shardCount: 2, guilds: 7 });
    const client = new Client({
      intents: [GatewayIntentBits.Guilds],
      shards: [0, 1],
      shardCount: 2,
      rest: { api: fake.restUrl },
      ws: { buildIdentifyThrottler: () => ({ waitForIdentify: async () => undefined }) },
    });
    clients.push(client);
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const agent = createListingAgent({
      config: {
        service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 },
        health: { enabled: false },
        stats: { enabled: true, mode: 'patch', v0: true },
      },
      discord: client,
      store: createMemoryStore(),
    });
    const posted: PostResult[] = [];
    agent.on('posted', (result) => posted.push(result));

    // The agent starts before the bot logs in: nothing may be posted from an empty cache.
    await agent.start();
    expect(agent.readiness.snapshot().components.stats?.ready).toBe(false);
    const ready = once(client, Events.ClientReady);
    await client.login(fake.token);
    await ready;

    // The first post goes out as soon as every shard is ready and every guild is available.
    await vi.waitFor(() => expect(posted.map((p) => p.target)).toEqual(expect.arrayContaining(['v1', 'v0'])), { timeout: 15_000, interval: 50 });
    const v1 = emu.admin.metrics(fx.projectId).filter((m) => m.source === 'v1');
    expect(v1.map((m) => m.metrics)).toEqual([{ server_count: 7, shard_count: 2 }]);
    expect(emu.admin.getProject(fx.projectId).stats).toMatchObject({ server_count: 7, shard_count: 2 });
    expect(emu.admin.metrics(fx.projectId).every((m) => m.metrics.server_count !== 0)).toBe(true);

    // Three guilds join, one leaves: the next post carries 9.
    fake.gateway.addGuild();
    fake.gateway.addGuild();
    fake.gateway.addGuild();
    fake.gateway.removeGuild(fake.gateway.guildIds()[0]!);
    await vi.waitFor(() => expect(client.guilds.cache.size).toBe(9));
    await agent.stop();
    const restarted = createListingAgent({
      config: {
        service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 },
        health: { enabled: false },
        stats: { enabled: true, mode: 'patch' },
      },
      discord: client,
      store: createMemoryStore(),
    });
    const next = new Promise<PostResult>((resolve) => restarted.once('posted', resolve));
    await restarted.start();
    expect((await next).samples[0]).toMatchObject({ serverCount: 9, shardCount: 2 });
    expect(emu.admin.metrics(fx.projectId).filter((m) => m.source === 'v1').at(-1)?.metrics).toEqual({ server_count: 9, shard_count: 2 });
    await restarted.stop();
  });
});
