/**
 * The same test as reward-bot.test.mjs, with node's own test runner and no other dependency:
 * `node --test reward-bot.node-test.mjs` (or `bun test reward-bot.node-test.mjs`). BOT_LIBRARY
 * picks the Client (discord.js by default, eris, oceanic.js). docs/testing.md explains it.
 */
import assert from 'node:assert/strict';
import { afterEach, test } from 'node:test';
import { startTestKit } from 'listing-agent/testing';
import { botClient } from './clients.mjs';
import { attachListing, LISTING_CONFIG } from './reward-bot.mjs';

const library = process.env.BOT_LIBRARY ?? 'discord.js';
/** @type {(() => Promise<void>)[]} */
const cleanups = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * Retries `check` until it passes or `timeoutMs` passes (then its last error is thrown).
 * @param {() => void} check
 */
async function eventually(check, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

test(`rewards each vote once (a weekend vote double) and reminds the voter 12 hours later (${library})`, async () => {
  const kit = await startTestKit({ guilds: 3 });
  cleanups.push(() => kit.close());
  const bot = await botClient(library, kit);
  /** @type {{ user: string; coins: number }[]} */
  const credits = [];
  /** @type {string[]} */
  const reminded = [];
  const wallet = { credit: async (/** @type {string} */ user, /** @type {number} */ coins) => void credits.push({ user, coins }), remind: async (/** @type {string} */ user) => void reminded.push(user) };
  const agent = attachListing(bot.client, kit.agentOptions(LISTING_CONFIG), wallet);
  cleanups.push(async () => {
    await bot.stop();
    await agent.stop();
  });
  await bot.login();

  await eventually(() => assert.deepEqual(kit.postedServerCounts(), [3]), 15_000);

  const vote = kit.vote();
  await eventually(() => assert.equal(credits.length, 1));
  const weekendVote = kit.vote({ weekend: true });
  await eventually(() => assert.equal(credits.length, 2));
  assert.deepEqual(credits, [
    { user: vote.platform_id, coins: 100 },
    { user: weekendVote.platform_id, coins: 200 },
  ]);
  assert.deepEqual(reminded, []);

  kit.advanceClock('12h1m');
  await eventually(() => assert.deepEqual([...reminded].sort(), [vote.platform_id, weekendVote.platform_id].sort()));
  assert.equal(credits.length, 2);
  assert.deepEqual(kit.refusals(), []);
});
