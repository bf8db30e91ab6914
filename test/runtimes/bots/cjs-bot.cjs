'use strict';
/*
 * A CommonJS bot as the discord.js guide writes one, with the agent in three lines, run from a
 * temporary project with the packed package installed (test/runtimes/packed-bots.check.ts). It also
 * checks that require() and import() share one copy of the package: the same functions and
 * classes, and one set of held state locks (a second agent on the same state directory, made
 * through import(), is refused "by this process").
 *
 * env: LISTING_AGENT_SERVICE_TOKEN, LISTING_V1, LISTING_V0, STATE_DIR, DISCORD_API, DISCORD_TOKEN
 */
const assert = require('node:assert/strict');
const { Client, GatewayIntentBits } = require('discord.js');
const { createListingAgent, ListingAgentError } = require('listing-agent');

// The undici copies loaded (CommonJS, whoever asked): discord.js's, before and after the agent's
// first post, which loads the agent's undici (on first use): the same one, found at the bot's top.
const undiciCopies = () => Object.keys(require.cache ?? {}).filter((path) => /[\\/]undici[\\/]index\.js$/.test(path)).sort();
const beforePost = undiciCopies();

const SUBPATHS = ['client', 'webhooks', 'stats', 'votes', 'commands', 'redis', 'config', 'runtime', 'emulator'];
const env = process.env;
const config = { service: { v1: env.LISTING_V1, v0: env.LISTING_V0 }, health: { enabled: false }, state: { directory: env.STATE_DIR } };

async function oneCopy(required) {
  const imported = await import('listing-agent');
  assert.equal(imported.createListingAgent, createListingAgent, 'require and import give one createListingAgent');
  for (const subpath of SUBPATHS) {
    const viaRequire = require(`listing-agent/${subpath}`);
    const viaImport = await import(`listing-agent/${subpath}`);
    assert.ok(Object.keys(viaRequire).length > 0, `listing-agent/${subpath} exports something`);
    for (const name of Object.keys(viaImport)) assert.equal(viaRequire[name], viaImport[name], `listing-agent/${subpath}: ${name} is one object`);
  }
  // A second agent on the running one's state directory, through import(): the lock is held here.
  const second = imported.createListingAgent({ token: env.LISTING_AGENT_SERVICE_TOKEN, config, autoStart: false });
  const refused = await second.start().then(() => undefined, (error) => error);
  assert.ok(refused instanceof ListingAgentError, `the second agent's start is refused with a ListingAgentError (got ${refused})`);
  assert.match(refused.message, /by this process/);
  await second.stop();
  assert.equal(required.phase, 'running');
}

const client = new Client({
  intents: [GatewayIntentBits.Guilds],
  rest: { api: env.DISCORD_API },
  // The fake gateway needs no 5 s between identifies.
  ws: { buildIdentifyThrottler: () => ({ waitForIdentify: async () => undefined }) },
});
const agent = createListingAgent({ token: env.LISTING_AGENT_SERVICE_TOKEN, discord: client, config });
agent.once('posted', (result) => {
  console.log(`posted ${result.samples.at(-1).serverCount} servers`);
  console.log(`undici copies ${JSON.stringify({ beforePost, afterPost: undiciCopies() })}`);
  oneCopy(agent).then(
    () => {
      console.log('one copy of the package');
      return client.destroy();
    },
    (error) => {
      console.error(error);
      process.exitCode = 1;
      return client.destroy();
    },
  );
});
agent.once('stopped', () => console.log('agent stopped'));
agent.on('error', (error) => console.error(`agent error: ${error.message}`));
client.login(env.DISCORD_TOKEN);
