import { startFakeDiscord, type FakeDiscord } from '../../testing/index.js';

/*
 * `listing-agent emulator --discord`: the fake Discord of `listing-agent/testing` beside the
 * emulator, so that a bot owner can run a whole bot by hand against both. Loaded only with the flag.
 */

/** The listed bot the fake Discord plays: its application ID and the project token. */
export interface DiscordBotListing {
  platformId: string;
  projectToken: string;
  v1: string;
  v0: string;
}

/** What `--discord` started and what a bot needs, as `--json` prints it. */
export interface DiscordSummary {
  rest: string;
  gateway: string;
  token: string;
  application_id: string;
  shards: number;
  guilds: number;
  environment: Record<string, string>;
}

/** Starts the fake Discord for `bot` with `shards` and `guilds`. */
export async function startEmulatorDiscord(
  bot: DiscordBotListing,
  shards: number,
  guilds: number,
): Promise<{ discord: FakeDiscord; summary: DiscordSummary }> {
  const discord = await startFakeDiscord({ shardCount: shards, guilds, applicationId: bot.platformId });
  const environment = {
    LISTING_AGENT_SERVICE_TOKEN: bot.projectToken,
    LISTING_AGENT_SERVICE_V1: bot.v1,
    LISTING_AGENT_SERVICE_V0: bot.v0,
    LISTING_AGENT_DISCORD_API_BASE_URL: discord.restUrl,
    DISCORD_TOKEN: discord.token,
    DISCORD_API: discord.restUrl,
  };
  const where = { rest: discord.restUrl, gateway: discord.gatewayUrl, token: discord.token, application_id: bot.platformId };
  const summary = { ...where, shards, guilds, environment };
  return { discord, summary };
}

/** The summary for a person: where the fake Discord is, and the settings for a bot. */
export function describeDiscord(summary: DiscordSummary): string {
  const lines = [
    'fake Discord is running (REST and gateway, in memory; the bot token is made up)',
    `  REST API      ${summary.rest}`,
    `  gateway       ${summary.gateway} (GET /gateway/bot answers it)`,
    `  bot token     ${summary.token}`,
    `  application   ${summary.application_id}: the seeded bot project's platform_id`,
    `  guilds        ${summary.guilds} on ${summary.shards} shard(s)`,
    '',
    'Settings for a bot (environment variables):',
    ...Object.entries(summary.environment).map(([name, value]) => `  ${name}=${value}`),
    '',
    "Point the bot's Client at DISCORD_API: discord.js `rest: { api }`, Oceanic.js `rest: { baseURL: <api>/v10 }`,",
    'Eris: see docs/testing.md.',
    'Its agent takes the LISTING_AGENT_* settings (the daemon reads them as they are).',
  ];
  return `${lines.join('\n')}\n`;
}
