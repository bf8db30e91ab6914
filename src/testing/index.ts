export { startTestKit } from './kit.js';
export type {
  StartTestKitOptions, TestKit, TestKitAgentConfig, TestKitAgentOptions, TestKitFault, TestKitProject, TestKitVoteInput,
} from './kit-types.js';
export { startFakeDiscord, type FakeDiscord, type StartFakeDiscordOptions } from './discord.js';
export { startFakeGateway } from './gateway.js';
export type { FakeGateway, FakeGatewayEvent, FakeGatewayOptions, FakeGatewaySession } from './gateway-types.js';
export { startFakeDiscordRest, type FakeDiscordRestOptions } from './rest.js';
export type { FakeApplicationCommand, FakeDiscordRest, FakeDiscordRestState, FakeRestAnswer, FakeRestRequest } from './rest-types.js';
export { guildIdAt, shardOfGuild } from './guilds.js';
