import type { Agent } from 'node:https';
import { erisRestOptions } from './eris.js';
import { startFakeGateway } from './gateway.js';
import type { FakeGateway, FakeGatewayOptions } from './gateway-types.js';
import { startFakeDiscordRest } from './rest.js';
import type { FakeDiscordRest } from './rest-types.js';

/** A fake Discord: the REST API and the gateway it points at. */
export interface FakeDiscord {
  rest: FakeDiscordRest;
  gateway: FakeGateway;
  /** The REST base (`http://127.0.0.1:<port>/api`), for discord.js: `new Client({ rest: { api: restUrl } })`. */
  restUrl: string;
  /** The gateway (`ws://127.0.0.1:<port>`); clients find it through `GET /gateway/bot` too. */
  gatewayUrl: string;
  /** The bot token the fake takes. */
  token: string;
  /** The bot's user ID and application ID (READY, `GET /applications/@me`). */
  applicationId: string;
  /**
   * Eris's `rest` options for the fake REST API (Eris speaks only HTTPS to a host without a port:
   * this agent hands it a plain socket to the fake): `new Eris.Client(token, { rest: fake.erisRestOptions() })`.
   */
  erisRestOptions(): { agent: Agent; domain: string };
  /** Stops both. */
  close(): Promise<void>;
}

/** Options of {@link startFakeDiscord}: the gateway's, with a default token and shard count. */
export type StartFakeDiscordOptions = Omit<FakeGatewayOptions, 'token' | 'shardCount' | 'port'> & {
  /** The bot token. Default `fake-bot-token`. */
  token?: string;
  /** Shards (`GET /gateway/bot` recommends this many; IDENTIFY must say it). Default 1. */
  shardCount?: number;
  /** Ports to listen on. Default 0 (any free port) for both. */
  ports?: { rest?: number; gateway?: number };
};

/**
 * Starts the fake gateway and the fake REST API together: `GET /gateway/bot` answers the gateway's
 * URL with `shards: shardCount`, and `approximate_guild_count` follows the gateway's guilds as they
 * join and leave.
 */
export async function startFakeDiscord(options: StartFakeDiscordOptions = {}): Promise<FakeDiscord> {
  const { ports, token = 'fake-bot-token', shardCount = 1, ...gatewayOptions } = options;
  const applicationId = options.applicationId ?? options.userId ?? '300000000000000001';
  const userId = options.userId ?? applicationId;
  const gatewayPort = ports?.gateway ? { port: ports.gateway } : {};
  const gateway = await startFakeGateway({ ...gatewayOptions, token, shardCount, userId, applicationId, ...gatewayPort });
  const rest = await startFakeDiscordRest({
    token,
    applicationId,
    gatewayUrl: gateway.url,
    recommendedShards: shardCount,
    approximateGuildCount: gateway.guildCount(),
    // discord.js asks for /gateway/bot once per login (and ShardingManager children each log in).
    remaining: 1_000,
    ...(ports?.rest ? { port: ports.rest } : {}),
  });
  gateway.onGuildsChanged = (count) => {
    rest.state.approximateGuildCount = count;
  };
  const close = async () => {
    await Promise.all([gateway.close(), rest.close()]);
  };
  const erisRest = () => erisRestOptions(rest.url);
  return { rest, gateway, restUrl: rest.url, gatewayUrl: gateway.url, token, applicationId, erisRestOptions: erisRest, close };
}
