import { Client as ErisClient } from 'eris';
import { Client as OceanicClient } from 'oceanic.js';
import { afterEach } from 'vitest';
import type { FakeDiscord } from './index.js';

/*
 * Real Eris and Oceanic.js clients pointed at the fake Discord (REST and gateway), through the
 * options each library offers, with no patch of either:
 *
 * - Oceanic.js: `rest.baseURL` (its REST goes through `fetch`, any scheme); the gateway URL comes
 *   from the fake's `GET /gateway/bot`, as from Discord's.
 * - Eris: `rest` from the kit's `erisRestOptions()` (src/testing/eris.ts: an agent that hands its
 *   `https.request` a plain socket to the fake REST); the gateway URL from `GET /gateway/bot`.
 */

const clients: { disconnect(options?: unknown): unknown }[] = [];
afterEach(() => {
  // Neither library reconnects after a disconnect that does not ask it to.
  for (const client of clients.splice(0)) client.disconnect(clientsDisconnect.get(client));
});
const clientsDisconnect = new WeakMap<object, unknown>();

/** What the clients emitted as `error` in this test (a dropped connection is one, for both). */
export const clientErrors: unknown[] = [];
afterEach(() => void clientErrors.splice(0));

/** Options shared by both. */
interface ClientOptions {
  /** The shard count, or `auto` (default): the fake's `GET /gateway/bot` answers its own. */
  shards?: number | 'auto';
  /** How long a shard waits for the GUILD_CREATEs after READY before it is ready anyway. Default 2000, both libraries' default. */
  guildCreateTimeoutMs?: number;
}

/** A real Eris Client (not yet connected) for the fake Discord; disconnected after the test. */
export function erisClient(fake: FakeDiscord, options: ClientOptions = {}): ErisClient {
  const client = new ErisClient(`Bot ${fake.token}`, {
    intents: ['guilds'],
    maxShards: options.shards ?? 'auto',
    guildCreateTimeout: options.guildCreateTimeoutMs ?? 2_000,
    rest: fake.erisRestOptions(),
  });
  // As every Eris bot must: an 'error' without a listener throws (a dropped socket emits one).
  client.on('error', (error) => void clientErrors.push(error));
  clients.push(client);
  clientsDisconnect.set(client, { reconnect: false });
  return client;
}

/** A real Oceanic.js Client (not yet connected) for the fake Discord; disconnected after the test. */
export function oceanicClient(fake: FakeDiscord, options: ClientOptions = {}): OceanicClient {
  const client = new OceanicClient({
    auth: `Bot ${fake.token}`,
    rest: { baseURL: `${fake.restUrl}/v10` },
    gateway: {
      intents: ['GUILDS'],
      maxShards: options.shards ?? 'auto',
      guildCreateTimeout: options.guildCreateTimeoutMs ?? 2_000,
      // The fake has no identify rate limit: no 5 s between shards of one bucket.
      override: { timeBetweenShardConnects: 0 },
    },
  });
  client.on('error', (error) => void clientErrors.push(error));
  clients.push(client);
  clientsDisconnect.set(client, false);
  return client;
}
