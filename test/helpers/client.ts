import { MockAgent } from 'undici';
import { afterEach } from 'vitest';
import { createListingClient, type ListingClient, type ListingClientOptions } from '../../src/api/client.js';
import type { TransportClock } from '../../src/api/transport.js';
import type { RunningEmulator } from '../../src/emulator/index.js';
import type { Scope } from '../../src/contract/limits.js';
import { setupBot, startTestEmulator } from './emulator.js';

/** A clock whose sleeps return at once and are recorded; `now` moves by each sleep. */
export interface FakeClock extends TransportClock {
  /** Every wait asked for, in order. */
  sleeps: number[];
  advance(ms: number): void;
}

/** A fake clock starting at `start` (default 2026-03-04T10:00:00Z). */
export function createFakeClock(start = Date.parse('2026-03-04T10:00:00Z')): FakeClock {
  let now = start;
  const sleeps: number[] = [];
  return {
    sleeps,
    now: () => now,
    advance(ms) {
      now += ms;
    },
    async sleep(ms, signal) {
      signal?.throwIfAborted();
      sleeps.push(ms);
      now += ms;
    },
  };
}

const clients: ListingClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

/** A client against the emulator's v1 and v0 bases, closed after the test. Retries wait on a fake clock by default. */
export function clientFor(emulator: RunningEmulator, options: ListingClientOptions): ListingClient {
  const client = createListingClient({
    v1BaseUrl: emulator.urls.v1,
    v0BaseUrl: emulator.urls.v0,
    clock: createFakeClock(),
    ...options,
  });
  clients.push(client);
  return client;
}

/**
 * An emulator on a fake clock, a bot fixture (every scope unless `scopes`), and a client factory
 * sharing that clock, so retries, cooldowns and rate-limit windows move together without sleeping.
 */
export async function setupClientTest(scopes?: Scope[]) {
  const clock = createFakeClock();
  const emu = await startTestEmulator({ now: () => clock.now() });
  const fx = setupBot(emu, scopes ? { scopes } : {});
  const client = (options: ListingClientOptions) => clientFor(emu, { clock, ...options });
  return { clock, emu, fx, client };
}

/** The v1 requests the emulator answered (to assert what was, or was not, sent). */
export function v1Requests(emu: RunningEmulator) {
  return emu.admin.requests().filter((r) => r.path.startsWith('/api/v1/'));
}

/** Every item of an async iterable. */
export async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of iterable) items.push(item);
  return items;
}

/** The emulator's log of requests to `method path` (path below `/api/v1`). */
export function loggedV1(emu: RunningEmulator, method: string, path: string) {
  return emu.admin.requests().filter((r) => r.method === method && r.path === `/api/v1${path}`);
}

const agents: MockAgent[] = [];
afterEach(async () => {
  await Promise.all(agents.splice(0).map((agent) => agent.close()));
});

/**
 * A dispatcher that answers the first `method path` (below `/api/v1`) with 502 without reaching
 * the emulator and passes everything else through: with the call then carried out out of band,
 * this is an answer lost after the service acted.
 */
export function losingFirstAnswer(emu: RunningEmulator, method: string, path: string): MockAgent {
  const agent = new MockAgent();
  agent.enableNetConnect(new URL(emu.urls.origin).host);
  agent.get(emu.urls.origin).intercept({ method, path: `/api/v1${path}` }).reply(502, 'bad gateway').times(1);
  agents.push(agent);
  return agent;
}
