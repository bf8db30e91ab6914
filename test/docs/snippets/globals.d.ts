/**
 * The names the docs' TypeScript examples use without declaring them, so that each example can
 * stay as short as a reader wants it and still type-check against the package
 * (test/docs/code-blocks-types.check.ts). Only that check reads this file: tsconfig.json excludes this
 * folder, so these globals never leak into the project's own code.
 */
import type { Client } from 'discord.js';
import type { ListingClient } from 'listing-agent';

declare global {
  /** The bot's discord.js client. */
  const client: Client;
  /** The project token (`service.token`). */
  const token: string;
  /** The bot's Discord token. */
  const discordToken: string;
  /** A listing-service client made with the project token. */
  const listing: ListingClient;
  /** A listing-service client made with an OAuth access token (or an application token). */
  const app: ListingClient;
  /** A service user ID, a Discord user ID. */
  const userId: string;
  const discordId: string;
  const discordUserId: string;
  /** An OAuth application's credentials and the URL the browser came back to. */
  const clientId: string;
  const clientSecret: string;
  const redirectUri: string;
  const callbackUrl: string;
  const integrationId: string;
  /** Sends the user's browser to `url`. */
  function redirectTheUserTo(url: string): void;
  /** The bot's own reward, idempotent on the key. */
  function giveReward(discordId: string | null, weight: number, idempotencyKey: string): Promise<void>;
  /** The bot's database. */
  const db: { rewards: { upsert(row: { key: string; discordId: string | null; coins: number }): Promise<void> } };
}

export {};
