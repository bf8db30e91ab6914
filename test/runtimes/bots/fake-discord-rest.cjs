'use strict';
/*
 * Test glue, not a part of any bot: loaded with NODE_OPTIONS=--require (so in a ShardingManager's
 * shard processes too), it sends what discord.js asks of https://discord.com to the fake Discord
 * (FAKE_DISCORD_API), as a resolver pointing discord.com at it would: undici's global dispatcher,
 * which discord.js's REST and its shard count request (`fetch`) both go through. The bot's own
 * code stays as the docs write it (test/runtimes/packed-examples.check.ts runs the shipped
 * examples unchanged); the agent's requests to the listing service use its own dispatcher.
 */
const { createRequire } = require('node:module');

const api = process.env.FAKE_DISCORD_API;
if (api) {
  // discord.js's own undici: the global dispatcher is one for every copy (a global symbol).
  const { Agent, setGlobalDispatcher } = createRequire(require.resolve('discord.js', { paths: [process.cwd()] }))('undici');
  const fake = new URL(api).origin;
  class ToFakeDiscord extends Agent {
    dispatch(options, handler) {
      const origin = new URL(String(options.origin)).origin;
      return super.dispatch(origin === 'https://discord.com' ? { ...options, origin: fake } : options, handler);
    }
  }
  setGlobalDispatcher(new ToFakeDiscord());
}
