import { afterEach } from 'vitest';
import {
  startFakeDiscord as startKitDiscord,
  startFakeDiscordRest as startKitRest,
  startFakeGateway as startKitGateway,
  type FakeDiscord,
  type FakeDiscordRest,
  type FakeDiscordRestOptions,
  type FakeGateway,
  type FakeGatewayOptions,
  type StartFakeDiscordOptions,
} from '../../../src/testing/index.js';

/*
 * The package's own tests use the fake Discord of `listing-agent/testing` (src/testing/), the one
 * bot owners get: these wrappers only close what a test started after it.
 */

export { guildIdAt, shardOfGuild } from '../../../src/testing/index.js';
export type {
  FakeDiscord,
  FakeDiscordRest,
  FakeDiscordRestState,
  FakeGateway,
  FakeGatewayEvent,
  FakeGatewayOptions,
  FakeGatewaySession,
  FakeRestRequest,
} from '../../../src/testing/index.js';

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((fake) => fake.close()));
});

function closedAfterTest<T extends { close(): Promise<void> }>(fake: T): T {
  open.push(fake);
  return fake;
}

/** The fake gateway and REST API together (see src/testing/discord.ts); closed after the test. */
export async function startFakeDiscord(options: StartFakeDiscordOptions = {}): Promise<FakeDiscord> {
  return closedAfterTest(await startKitDiscord(options));
}

/** The fake gateway alone; closed after the test. */
export async function startFakeGateway(options: FakeGatewayOptions): Promise<FakeGateway> {
  return closedAfterTest(await startKitGateway(options));
}

/** The fake REST API alone; closed after the test. */
export async function startFakeDiscordRest(options: FakeDiscordRestOptions = {}): Promise<FakeDiscordRest> {
  return closedAfterTest(await startKitRest(options));
}
