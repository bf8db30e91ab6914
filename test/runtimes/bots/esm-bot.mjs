/*
 * An ES module bot with the agent in three lines, run from a temporary project with the packed
 * package installed (test/runtimes/packed-bots.check.ts): every subpath imports, an error thrown by
 * the package is an instance of the class that require() gives (one copy of the package).
 *
 * env: LISTING_AGENT_SERVICE_TOKEN, LISTING_V1, LISTING_V0, STATE_DIR, DISCORD_API, DISCORD_TOKEN
 */
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { Client, GatewayIntentBits } from 'discord.js';
import { createListingAgent } from 'listing-agent';
import * as client from 'listing-agent/client';
import * as webhooks from 'listing-agent/webhooks';
import * as stats from 'listing-agent/stats';
import * as votes from 'listing-agent/votes';
import * as commands from 'listing-agent/commands';
import * as redis from 'listing-agent/redis';
import * as configPart from 'listing-agent/config';
import * as runtime from 'listing-agent/runtime';
import * as emulator from 'listing-agent/emulator';

const env = process.env;
const require = createRequire(import.meta.url);
// The undici copies loaded (CommonJS, whoever asked): discord.js's, before and after the agent's
// first post, which loads the agent's undici (on first use): the same one, found at the bot's top.
const undiciCopies = () => Object.keys(require.cache ?? {}).filter((path) => /[\\/]undici[\\/]index\.js$/.test(path)).sort();
const beforePost = undiciCopies();
const parts = { client, webhooks, stats, votes, commands, redis, config: configPart, runtime, emulator };
for (const [subpath, part] of Object.entries(parts)) {
  assert.ok(Object.keys(part).length > 0, `listing-agent/${subpath} exports something`);
  assert.equal(require(`listing-agent/${subpath}`)[Object.keys(part)[0]], part[Object.keys(part)[0]], `listing-agent/${subpath}: one copy`);
}
// Thrown by the ES module side, caught as the CommonJS side's class.
const { ConfigError } = require('listing-agent');
assert.throws(() => createListingAgent({ token: 'a.b.c', config: { service: { token: 'd.e.f' } } }), ConfigError);
console.log('one copy of the package');

const bot = new Client({
  intents: [GatewayIntentBits.Guilds],
  rest: { api: env.DISCORD_API },
  ws: { buildIdentifyThrottler: () => ({ waitForIdentify: async () => undefined }) },
});
const config = { service: { v1: env.LISTING_V1, v0: env.LISTING_V0 }, health: { enabled: false }, state: { directory: env.STATE_DIR } };
const agent = createListingAgent({ token: env.LISTING_AGENT_SERVICE_TOKEN, discord: bot, config });
agent.once('posted', (result) => {
  console.log(`posted ${result.samples.at(-1).serverCount} servers`);
  console.log(`undici copies ${JSON.stringify({ beforePost, afterPost: undiciCopies() })}`);
  void bot.destroy();
});
agent.once('stopped', () => console.log('agent stopped'));
agent.on('error', (error) => console.error(`agent error: ${error.message}`));
await bot.login(env.DISCORD_TOKEN);
