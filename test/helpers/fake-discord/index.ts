import { startFakeGateway, type FakeGateway, type FakeGatewayOptions } from './gateway.js';
import { startFakeDiscordRest, type FakeDiscordRest } from './rest.js';

export { startFakeGateway, type FakeGateway, type FakeGatewayEvent, type FakeGatewayOptions, type FakeGatewaySession } from './gateway.js';
export { guildIdAt, shardOfGuild } from './guilds.js';
export { startFakeDiscordRest, type FakeDiscordRest, type FakeDiscordRestState, type FakeRestRequest } from './rest.js';

/** A fake Discord: the REST API and the gateway it points at. */
export interface FakeDiscord {
  rest: FakeDiscordRest;
  gateway: FakeGateway;
  /** For discord.js: `new Client({ rest: { api: fake.restUrl } })`. */
  restUrl: string;
  token: string;
}

/**
 * Starts the fake gateway and the fake REST API together: `GET /gateway/bot` answers the gateway's
 * URL with `shards: shardCount`, and `approximate_guild_count` follows the gateway's guilds as they
 * join and leave. Both close after each test.
 */
export async function startFakeDiscord(options: Omit<FakeGatewayOptions, 'token'> & { token?: string }): Promise<FakeDiscord> {
  const token = options.token ?? 'fake-bot-token';
  const gateway = await startFakeGateway({ ...options, token });
  const rest = await startFakeDiscordRest({
    token,
    gatewayUrl: gateway.url,
    recommendedShards: options.shardCount,
    approximateGuildCount: gateway.guildCount(),
    // discord.js asks for /gateway/bot once per login (and ShardingManager children each log in).
    remaining: 1_000,
  });
  gateway.onGuildsChanged = (count) => {
    rest.state.approximateGuildCount = count;
  };
  return { rest, gateway, restUrl: rest.url, token };
}
