import { once } from 'node:events';
import { Client, Events, GatewayIntentBits } from 'discord.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createDiscordClientSource } from '../../../src/stats/sources/discord-client.js';
import type { CountReading } from '../../../src/stats/source.js';
import { startFakeDiscord, type FakeDiscord } from '../../helpers/fake-discord/index.js';

const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.destroy()));
});

/** A real discord.js Client for the fake, destroyed after the test. */
function clientFor(fake: FakeDiscord, shards: number[] = [0, 1], shardCount = 2): Client {
  const client = new Client({
    intents: [GatewayIntentBits.Guilds],
    shards,
    shardCount,
    rest: { api: fake.restUrl },
    // discord.js spaces identifies 5 s apart per concurrency bucket, as Discord asks; the fake does
    // not care, and a shard that identifies again would otherwise wait out those 5 s.
    ws: { buildIdentifyThrottler: () => ({ waitForIdentify: async () => undefined }) },
  });
  clients.push(client);
  return client;
}

async function loggedIn(fake: FakeDiscord): Promise<Client> {
  const client = clientFor(fake);
  const ready = once(client, Events.ClientReady);
  await client.login(fake.token);
  await ready;
  return client;
}

/** Waits until the source reads `expected` (a ready reading with these counts). */
async function readsEventually(read: () => Promise<CountReading>, expected: Partial<Extract<CountReading, { ready: true }>>) {
  await vi.waitFor(async () => expect(await read()).toMatchObject({ ready: true, ...expected }), { timeout: 5_000, interval: 20 });
}

describe('stats source: discord.js Client against the fake gateway', () => {
  it('is not ready before login, while READY is withheld and while guilds are unavailable, then reads the true counts', async () => {
    const fake = await startFakeDiscord({ shardCount: 2, guilds: 5, hold: { ready: true, guilds: true } });
    const client = clientFor(fake);
    const source = createDiscordClientSource(client);

    const before = await source.read();
    expect(before).toEqual({ ready: false, reason: expect.stringContaining('has not logged in yet') });

    const login = client.login(fake.token);
    await vi.waitFor(() => expect(fake.gateway.sessions().map((s) => s.shardId)).toEqual([0, 1]));
    // Identified, READY withheld: the cache is empty, and an empty cache is not a count of 0.
    expect(client.guilds.cache.size).toBe(0);
    const identifying = await source.read();
    expect(identifying).toEqual({ ready: false, reason: expect.stringMatching(/the Client is not ready yet \(shard 0 is \w+, shard 1 is \w+\)/) });

    fake.gateway.release('ready');
    await login;
    // READY listed 5 unavailable guilds; their GUILD_CREATEs are withheld.
    expect(client.guilds.cache.size).toBe(5);
    const filling = await source.read();
    expect(filling.ready).toBe(false);
    expect(filling).toMatchObject({ reason: expect.stringContaining('shard 0 has 3 of 3 guilds still unavailable') });
    expect(filling).toMatchObject({ reason: expect.stringContaining('shard 1 has 2 of 2 guilds still unavailable') });

    const ready = once(client, Events.ClientReady);
    fake.gateway.release('guilds');
    await ready;
    expect(await source.read()).toEqual({ ready: true, serverCount: 5, shardCount: 2, shards: [3, 2] });
    expect(source.description).toBe('discord.js Client (2 shards)');
  });

  it('follows guilds joining and leaving', async () => {
    const fake = await startFakeDiscord({ shardCount: 2, guilds: 4 });
    const client = await loggedIn(fake);
    const source = createDiscordClientSource(client);
    expect(await source.read()).toEqual({ ready: true, serverCount: 4, shardCount: 2, shards: [2, 2] });

    const joined = [fake.gateway.addGuild(), fake.gateway.addGuild(), fake.gateway.addGuild()];
    fake.gateway.removeGuild(joined[1]!);
    await readsEventually(() => source.read(), { serverCount: 6, shards: [fake.gateway.guildCount(0), fake.gateway.guildCount(1)] });
    expect(fake.gateway.guildCount()).toBe(6);
    expect(fake.rest.state.approximateGuildCount).toBe(6);
  });

  it('is not ready while a shard is disconnected, then resumes with the guilds that joined meanwhile (never a 0)', async () => {
    const fake = await startFakeDiscord({ shardCount: 2, guilds: 4 });
    const client = await loggedIn(fake);
    const source = createDiscordClientSource(client);

    const reconnecting = once(client, Events.ShardReconnecting);
    expect(fake.gateway.disconnectShard(1)).toBe(1);
    await reconnecting;
    const down = await source.read();
    expect(down).toEqual({ ready: false, reason: expect.stringMatching(/^counts not ready: shard 1 is (Connecting|Resuming)/) });

    // A guild of shard 1 joins while it is away: the fake replays it after RESUME.
    let joined = fake.gateway.addGuild();
    while (fake.gateway.shardOf(joined) !== 1) {
      fake.gateway.removeGuild(joined);
      joined = fake.gateway.addGuild();
    }
    const resumed = once(client, Events.ShardResume);
    await resumed;
    expect(fake.gateway.events.filter((e) => e.type === 'resume')).toEqual([{ type: 'resume', shardId: 1 }]);
    await readsEventually(() => source.read(), { serverCount: 5, shards: [2, 3] });
  });

  it('is not ready while a shard whose session was lost identifies again, then reads the same counts', async () => {
    const fake = await startFakeDiscord({ shardCount: 2, guilds: 4 });
    const client = await loggedIn(fake);
    const source = createDiscordClientSource(client);

    const reconnecting = once(client, Events.ShardReconnecting);
    fake.gateway.disconnectShard(0, { invalidateSession: true });
    await reconnecting;
    expect((await source.read()).ready).toBe(false);

    const again = once(client, Events.ShardReady);
    expect((await again)[0]).toBe(0);
    expect(fake.gateway.events.filter((e) => e.type === 'identify' && e.shardId === 0)).toHaveLength(2);
    expect(fake.gateway.events.some((e) => e.type === 'invalid_session')).toBe(true);
    expect(await source.read()).toEqual({ ready: true, serverCount: 4, shardCount: 2, shards: [2, 2] });
  });

  it('is not ready while a guild is unavailable in an outage', async () => {
    const fake = await startFakeDiscord({ shardCount: 2, guilds: 3 });
    const client = await loggedIn(fake);
    const source = createDiscordClientSource(client);
    const [first] = fake.gateway.guildIds(0);

    fake.gateway.markUnavailable(first!);
    await vi.waitFor(async () => expect(await source.read()).toMatchObject({ ready: false, reason: expect.stringContaining('shard 0 has 1 of 2 guilds still unavailable') }));
    fake.gateway.markAvailable(first!);
    await readsEventually(() => source.read(), { serverCount: 3, shards: [2, 1] });
  });

  it('is never ready when the Client runs only some of the shards outside a manager', async () => {
    const fake = await startFakeDiscord({ shardCount: 2, guilds: 4 });
    const client = clientFor(fake, [0], 2);
    const ready = once(client, Events.ClientReady);
    await client.login(fake.token);
    await ready;
    const reading = await createDiscordClientSource(client).read();
    expect(reading).toEqual({ ready: false, reason: expect.stringContaining('this Client runs shard 0 of 2 outside any ShardingManager or cluster') });
  });
});
