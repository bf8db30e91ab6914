import { once } from 'node:events';
import { mkdtemp, readFile } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client as ErisClient } from 'eris';
import type { Client as OceanicClient } from 'oceanic.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createListingAgent, type ListingAgent } from '../../../src/agent/agent.js';
import { createErisClientSource, createOceanicClientSource } from '../../../src/stats/sources/eris-oceanic.js';
import type { CountSource } from '../../../src/stats/source.js';
import { setupBot, startTestEmulator } from '../../helpers/emulator.js';
import { startFakeDiscord, type FakeDiscord, type FakeGatewayOptions } from '../../helpers/fake-discord/index.js';
import { clientErrors, erisClient, oceanicClient } from '../../helpers/fake-discord/other-libraries.js';

/**
 * The README's three lines with a real Eris or Oceanic.js Client connected to the fake gateway:
 * `createListingAgent({ token, discord: client })` and nothing else, against the emulator. The
 * clients are the libraries' own, pointed at the fake through their options (see
 * test/helpers/fake-discord/other-libraries.ts).
 */

/** What differs between the two libraries, for the same tests. */
interface Library<C> {
  name: string;
  client(fake: FakeDiscord, guildCreateTimeoutMs?: number): C;
  connect(client: C): Promise<void>;
  ready(client: C): boolean;
  /** The library's way to end the client for good. */
  disconnectForGood(client: C): void;
  /** The library's way to drop the connection and come back by itself. */
  disconnectAndReconnect(client: C): void;
  source(client: C): CountSource;
}

const eris: Library<ErisClient> = {
  name: 'Eris',
  client: (fake, guildCreateTimeoutMs) => erisClient(fake, { guildCreateTimeoutMs }),
  connect: (client) => client.connect(),
  ready: (client) => client.ready,
  disconnectForGood: (client) => client.disconnect({ reconnect: false }),
  disconnectAndReconnect: (client) => client.disconnect({ reconnect: 'auto' }),
  source: (client) => createErisClientSource(client),
};

const oceanic: Library<OceanicClient> = {
  name: 'Oceanic.js',
  client: (fake, guildCreateTimeoutMs) => oceanicClient(fake, { guildCreateTimeoutMs }),
  connect: (client) => client.connect(),
  ready: (client) => client.ready,
  disconnectForGood: (client) => client.disconnect(false),
  // With no argument Oceanic.js reconnects (its `autoReconnect` default).
  disconnectAndReconnect: (client) => client.disconnect(),
  source: (client) => createOceanicClientSource(client),
};

const agents: ListingAgent[] = [];
afterEach(async () => {
  await Promise.all(agents.splice(0).map((agent) => agent.stop()));
});

const APP_ID = '300000000000000001';
const WAIT = { timeout: 15_000, interval: 20 };

async function listing(gateway: Omit<FakeGatewayOptions, 'token'>) {
  const fake = await startFakeDiscord(gateway);
  const emu = await startTestEmulator();
  const fx = setupBot(emu);
  const directory = await mkdtemp(join(tmpdir(), 'la-eris-oceanic-'));
  const where = { service: { v1: emu.urls.v1, v0: emu.urls.v0 }, health: { enabled: false }, state: { directory } };
  const posted = () => emu.admin.metrics(fx.projectId).map((m) => ({ servers: m.metrics.server_count, shards: m.metrics.shard_count }));
  return { fake, emu, fx, directory, where, posted };
}

describe.each([eris, oceanic] as Library<unknown>[])('embedded in three lines with a real $name Client', (library) => {
  it('starts at ready, posts the servers and shards of its cache, and stops on a disconnect for good', async () => {
    const { fake, fx, directory, where, posted } = await listing({ shardCount: 2, guilds: 5, hold: { ready: true } });
    const client = library.client(fake);
    const agent = createListingAgent({ token: fx.projectToken, discord: client, config: where });
    agents.push(agent);

    await library.connect(client);
    // Both shards identified, READY withheld: the client is not ready, so the agent has not started.
    await vi.waitFor(() => expect(fake.gateway.events.filter((e) => e.type === 'identify')).toHaveLength(2), WAIT);
    for (let turn = 0; turn < 5; turn += 1) await new Promise((resolve) => setImmediate(resolve));
    expect(agent.phase).toBe('idle');
    expect(posted()).toEqual([]);

    fake.gateway.release('ready');
    await vi.waitFor(() => expect(posted()).toEqual([{ servers: 5, shards: 2 }]), WAIT);
    expect(agent.config.stats.enabled).toBe(true);
    expect(await library.source(client).read()).toEqual({
      ready: true,
      serverCount: 5,
      shardCount: 2,
      shards: [fake.gateway.guildCount(0), fake.gateway.guildCount(1)],
    });

    const stopped = once(agent, 'stopped');
    library.disconnectForGood(client);
    await stopped;
    expect(agent.phase).toBe('stopped');
    const state = JSON.parse(await readFile(join(directory, 'state.json'), 'utf8')) as { data: Record<string, { stoppedAt?: string }> };
    expect(state.data['agent:lastRun']?.stoppedAt).toEqual(expect.any(String));
  });

  it('counts the servers still unavailable when the client is ready without their GUILD_CREATE', async () => {
    const { fake, fx, where, posted } = await listing({ shardCount: 1, guilds: 4, hold: { guilds: true } });
    // Both libraries call a shard ready after guildCreateTimeout even while guilds are missing.
    const client = library.client(fake, 50);
    agents.push(createListingAgent({ token: fx.projectToken, discord: client, config: where }));
    await library.connect(client);
    await vi.waitFor(() => expect(posted()).toEqual([{ servers: 4, shards: 1 }]), WAIT);
    expect(fake.gateway.sessions()[0]?.guildsSent).toBe(false);

    fake.gateway.release('guilds');
    await vi.waitFor(() => expect(fake.gateway.sessions()[0]?.guildsSent).toBe(true), WAIT);
    expect(await library.source(client).read()).toEqual({ ready: true, serverCount: 4, shardCount: 1, shards: [4] });
  });

  it('keeps running through a dropped connection and a disconnect that reconnects', async () => {
    const { fake, fx, where, posted } = await listing({ shardCount: 1, guilds: 3 });
    const client = library.client(fake);
    const agent = createListingAgent({ token: fx.projectToken, discord: client, config: where });
    agents.push(agent);
    await library.connect(client);
    await vi.waitFor(() => expect(posted()).toEqual([{ servers: 3, shards: 1 }]), WAIT);
    const source = library.source(client);

    // Every shard down: the client emits `disconnect`, then resumes by itself.
    fake.gateway.disconnectShard(0, { code: 4000 });
    await vi.waitFor(() => expect(fake.gateway.sessions()[0]?.resumes).toBe(1), WAIT);
    // Both libraries report the drop as an error event (the bot's listener keeps it from throwing).
    expect(clientErrors).toContainEqual(expect.objectContaining({ code: 4000 }));
    await vi.waitFor(() => expect(library.ready(client)).toBe(true), WAIT);
    library.disconnectAndReconnect(client);
    expect(await source.read()).toMatchObject({ ready: false, reason: expect.stringContaining(`the ${library.name} Client is not ready yet`) });
    await vi.waitFor(() => expect(library.ready(client)).toBe(true), WAIT);

    expect(agent.phase).toBe('running');
    expect(await source.read()).toEqual({ ready: true, serverCount: 3, shardCount: 1, shards: [3] });
  });

  it("syncs the application's global commands, read through the client with their localizations", async () => {
    const { fake, emu, fx, where } = await listing({ shardCount: 1, guilds: 1 });
    const queries: string[] = [];
    fake.rest.route('GET', `/applications/${APP_ID}/commands`, (req: IncomingMessage) => {
      queries.push(new URL(req.url ?? '/', 'http://fake').search);
      return {
        status: 200,
        body: [
          { id: '1250000000000000001', application_id: APP_ID, version: '1', type: 1, name: 'ping', description: 'Replies with pong', name_localizations: { de: 'klingeln' }, integration_types: [0] },
          { id: '1250000000000000002', application_id: APP_ID, version: '1', type: 3, name: 'Report', description: '', integration_types: [0] },
        ],
      };
    });
    const client = library.client(fake);
    agents.push(createListingAgent({ token: fx.projectToken, discord: client, config: { ...where, commands: { enabled: true } } }));
    await library.connect(client);
    await vi.waitFor(() => expect(emu.admin.commands(fx.projectId)).toHaveLength(2), WAIT);
    expect(emu.admin.commands(fx.projectId)).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'ping', name_localizations: { de: 'klingeln' } }), expect.objectContaining({ name: 'Report', type: 3 })]),
    );
    expect(queries).toEqual(['?with_localizations=true']);
  });
});
