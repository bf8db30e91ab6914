/**
 * The bot's listing code end to end, with vitest: its own Client on a fake Discord, its agent on
 * the listing-service emulator, one clock. `npx vitest run reward-bot.test.mjs`; BOT_LIBRARY picks
 * the Client (discord.js by default, eris, oceanic.js). docs/testing.md explains it.
 */
import { afterEach, expect, it, vi } from 'vitest';
import { startTestKit } from 'listing-agent/testing';
import { botClient } from './clients.mjs';
import { attachListing, LISTING_CONFIG } from './reward-bot.mjs';

const library = process.env.BOT_LIBRARY ?? 'discord.js';
/** @type {(() => Promise<void>)[]} */
const cleanups = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A wallet that records what the reward code did. */
function recordingWallet() {
  const wallet = {
    /** @type {{ user: string; coins: number }[]} */
    credits: [],
    /** @type {string[]} */
    reminded: [],
    /** @param {string} user @param {number} coins */
    credit: async (user, coins) => void wallet.credits.push({ user, coins }),
    /** @param {string} user */
    remind: async (user) => void wallet.reminded.push(user),
  };
  return wallet;
}

it(`rewards each vote once (a weekend vote double) and reminds the voter 12 hours later (${library})`, async () => {
  const kit = await startTestKit({ guilds: 3 });
  cleanups.push(() => kit.close());
  const bot = await botClient(library, kit);
  const wallet = recordingWallet();
  const agent = attachListing(bot.client, kit.agentOptions(LISTING_CONFIG), wallet);
  cleanups.push(async () => {
    await bot.stop();
    await agent.stop();
  });
  await bot.login();

  // The agent started with the client and posted its server count.
  await vi.waitFor(() => expect(kit.postedServerCounts()).toEqual([3]), { timeout: 15_000 });

  const vote = kit.vote();
  await vi.waitFor(() => expect(wallet.credits).toHaveLength(1), { timeout: 10_000 });
  const weekendVote = kit.vote({ weekend: true });
  await vi.waitFor(() => expect(wallet.credits).toHaveLength(2), { timeout: 10_000 });
  // Once each, though the agent polled the votes again in between.
  expect(wallet.credits).toEqual([
    { user: vote.platform_id, coins: 100 },
    { user: weekendVote.platform_id, coins: 200 },
  ]);
  expect(wallet.reminded).toEqual([]);

  // A vote lasts 12 hours: then its voter can vote again.
  kit.advanceClock('12h1m');
  await vi.waitFor(() => expect(wallet.reminded.toSorted()).toEqual([vote.platform_id, weekendVote.platform_id].toSorted()), { timeout: 10_000 });
  expect(wallet.credits).toHaveLength(2);
  // Nothing the bot did needed what the fake Discord cannot imitate.
  expect(kit.refusals()).toEqual([]);
});
