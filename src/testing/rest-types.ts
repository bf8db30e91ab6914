import type { IncomingMessage } from 'node:http';

/** What the fake Discord REST API answers; tests change it between calls. */
export interface FakeDiscordRestState {
  /** `id` of `GET /applications/@me`, and the application of the commands routes. */
  applicationId: string;
  /** `approximate_guild_count` of `GET /applications/@me`. */
  approximateGuildCount: number;
  /** `shards` of `GET /gateway/bot`. */
  recommendedShards: number;
  /** `url` of `GET /gateway/bot` (the fake gateway's `ws://` URL, when there is one). */
  gatewayUrl: string;
  /** The bot token the API accepts (`Authorization: Bot <token>`). */
  token: string;
  /** Requests left in the current rate-limit bucket; at 0 the API answers 429. Default 50. */
  remaining: number;
  /** Seconds until the bucket resets (`X-RateLimit-Reset-After`, and `Retry-After` on a 429). Default 1. */
  resetAfterSeconds: number;
}

/** A request the fake REST API received. */
export interface FakeRestRequest {
  method: string;
  /** The path without `/api` and its version (`/applications/@me`). */
  path: string;
  authorization: string | undefined;
  status: number;
  /** The request's body, as text ('' when it had none). */
  body: string;
}

/** An application command as the fake stores it: what the bot registered, with the IDs Discord adds. */
export interface FakeApplicationCommand {
  id: string;
  application_id: string;
  name: string;
  description: string;
  type: number;
  version: string;
  [field: string]: unknown;
}

/** What a route added with `route()` answers. */
export type FakeRestAnswer = (req: IncomingMessage, body: string) => { status: number; body: unknown };

/**
 * A fake of the Discord REST routes a bot and the agent use at login and for commands, with
 * Discord's rate-limit headers: `GET /gateway/bot`, `GET /gateway`, `GET /applications/@me`, and
 * the application's global commands (`GET`, `PUT`, `POST /applications/{id}/commands`, `GET`,
 * `PATCH`, `DELETE /applications/{id}/commands/{command}`). Any other route is refused with a 501
 * that names it (and listed in `refused`), never answered wrongly.
 */
export interface FakeDiscordRest {
  /** Base URL, like `https://discord.com/api` (no version: clients add `/v10`). */
  readonly url: string;
  readonly state: FakeDiscordRestState;
  readonly requests: FakeRestRequest[];
  /** The global commands registered (`PUT /applications/{id}/commands` replaces them). */
  commands(): FakeApplicationCommand[];
  /** Routes the fake does not implement that were asked for, as `METHOD /path`. */
  readonly refused: string[];
  /** Adds or replaces a route (`GET`, `/users/@me`); it wins over the fake's own. */
  route(method: string, path: string, answer: FakeRestAnswer): void;
  /** Stops listening and closes every connection. */
  close(): Promise<void>;
}
