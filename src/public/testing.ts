/**
 * `listing-agent/testing`: a bot's own listing code, end to end, on one machine and offline. A fake
 * Discord (REST and a WebSocket gateway that discord.js, Eris and Oceanic.js Clients log in to) and
 * the listing-service emulator on one clock, with what a test does: guilds joining and leaving on a
 * shard, votes (weekend ones too), the clock moved so that reminders fire, what was posted and
 * synced read back, the service made to fail. Not loaded by `listing-agent`: a test imports it.
 *
 * ```ts
 * import { startTestKit } from 'listing-agent/testing';
 * await using kit = await startTestKit({ guilds: 3 });
 * const client = new Client({ intents: [GatewayIntentBits.Guilds], rest: { api: kit.discord.restUrl } });
 * const agent = createListingAgent({ ...kit.agentOptions({ votes: { enabled: true } }), discord: client });
 * ```
 *
 * See docs/testing.md.
 *
 * @packageDocumentation
 */
export {
  startTestKit,
  startFakeDiscord,
  startFakeGateway,
  startFakeDiscordRest,
  guildIdAt,
  shardOfGuild,
} from '../testing/index.js';
export type {
  StartTestKitOptions,
  TestKit,
  TestKitAgentConfig,
  TestKitAgentOptions,
  TestKitFault,
  TestKitProject,
  TestKitVoteInput,
  FakeDiscord,
  StartFakeDiscordOptions,
  FakeGateway,
  FakeGatewayEvent,
  FakeGatewayOptions,
  FakeGatewaySession,
  FakeDiscordRest,
  FakeDiscordRestOptions,
  FakeDiscordRestState,
  FakeApplicationCommand,
  FakeRestAnswer,
  FakeRestRequest,
} from '../testing/index.js';
/** The emulator's types the kit's API names (also exported by `listing-agent/emulator`). */
export type { AdminVote, EmulatorSettings, RunningEmulator } from '../emulator/index.js';
