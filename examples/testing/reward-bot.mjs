/**
 * A small bot's listing code, as a bot owner writes it: the agent beside the bot's Client, a vote
 * rewarded with coins (twice as many for a weekend vote, which counts double), and a reminder when
 * the voter can vote again. `wallet` is the bot's own storage (a database, in a real bot).
 *
 * In production the bot calls it with its token and config:
 *
 *   attachListing(client, { token: process.env.LISTING_AGENT_SERVICE_TOKEN, config: LISTING_CONFIG }, wallet);
 *
 * and the tests beside it (reward-bot.test.mjs for vitest, reward-bot.node-test.mjs for node's
 * test runner) call it with `kit.agentOptions(LISTING_CONFIG)` of `listing-agent/testing`.
 * docs/testing.md explains it.
 */
import { createListingAgent } from 'listing-agent';

/** The bot's listing settings: votes rewarded, voters reminded when they can vote again. */
export const LISTING_CONFIG = { votes: { enabled: true, reminders: { enabled: true } } };

/** Coins for one vote; a vote's `weight` is 2 on weekends. */
export const COINS_PER_VOTE = 100;

/**
 * @typedef {object} Wallet the bot's own storage
 * @property {(discordUserId: string, coins: number) => Promise<void>} credit pays a voter
 * @property {(discordUserId: string) => Promise<void>} remind tells a voter they can vote again
 */

/**
 * Starts the listing agent for `client` (a discord.js, Eris or Oceanic.js Client, not logged in
 * yet): it starts when the client is ready and stops when the client is destroyed or disconnected.
 * @param {unknown} client
 * @param {Parameters<typeof createListingAgent>[0]} agentOptions
 * @param {Wallet} wallet
 */
export function attachListing(client, agentOptions, wallet) {
  const agent = createListingAgent({ ...agentOptions, discord: client });
  // The reward: the agent calls it once per vote, across restarts; a throw is retried.
  agent.on('vote', async (vote) => {
    if (vote.platformId !== null) await wallet.credit(vote.platformId, COINS_PER_VOTE * vote.weight);
  });
  agent.on('reminder', async (vote) => {
    if (vote.platformId !== null) await wallet.remind(vote.platformId);
  });
  return agent;
}
