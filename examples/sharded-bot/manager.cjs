'use strict';
/*
 * A discord.js bot sharded with a ShardingManager (CommonJS, as the discord.js guide writes one),
 * with listing-agent in the manager's process, once, not in each shard: docs/migrating.md,
 * "A sharded bot". shard.cjs is the bot itself, one process per shard.
 *
 * - The agent posts the whole bot's counts: every shard's cache, summed, once every shard is ready.
 * - Each vote is rewarded once, across restarts, in the shard that holds the support server
 *   (broadcastEval to that shard): the voter gets a role there. A throw is a failed reward, retried.
 * - `/perk` (in shard.cjs) asks hasVoted from the shard's own process.
 *
 * Settings as the daemon reads them (loadConfig): LISTING_AGENT_* variables (the project token is
 * LISTING_AGENT_SERVICE_TOKEN), a .env file, the file LISTING_AGENT_CONFIG names. DISCORD_TOKEN is
 * the bot's own token; the manager hands it to each shard.
 *
 *   LISTING_AGENT_SERVICE_TOKEN=... DISCORD_TOKEN=... SUPPORT_GUILD_ID=... VOTER_ROLE_ID=... node manager.cjs
 */
const { join } = require('node:path');
const { ShardClientUtil, ShardingManager } = require('discord.js');
const { createListingAgent, loadConfig } = require('listing-agent');

const manager = new ShardingManager(join(__dirname, 'shard.cjs'), { token: process.env.DISCORD_TOKEN });

/**
 * Gives the voter the role, from the shard whose process holds the guild. Runs inside that shard:
 * broadcastEval sends the function's text, so it uses only its arguments.
 * @param {import('discord.js').Client} client
 * @param {{ guildId: string, roleId: string, userId: string, key: string }} reward
 */
async function giveRole(client, { guildId, roleId, userId, key }) {
  const guild = client.guilds.cache.get(guildId) ?? (await client.guilds.fetch(guildId));
  await guild.members.addRole({ user: userId, role: roleId, reason: `voted on the listing (${key})` });
}

async function main() {
  // The shards first: the reward needs them, and the manager knows the shard count once spawned.
  await manager.spawn();
  const { input } = await loadConfig({ env: process.env, cwd: process.cwd() });
  const agent = createListingAgent({ discord: manager, config: { ...input, votes: { enabled: true, ...input.votes } } });
  // The reward hook, attached before the agent starts (it starts on the next turn of the event loop).
  agent.on('vote', async (vote) => {
    const { SUPPORT_GUILD_ID: guildId, VOTER_ROLE_ID: roleId } = process.env;
    if (guildId === undefined || roleId === undefined || vote.platformId === null) return;
    const shard = ShardClientUtil.shardIdForGuildId(guildId, manager.shards.size);
    await manager.broadcastEval(giveRole, { shard, context: { guildId, roleId, userId: vote.platformId, key: vote.key } });
    console.log(`rewarded ${vote.platformId} for vote ${vote.key} (shard ${shard})`);
  });
  agent.once('posted', (result) => console.log(`posted ${result.samples.at(-1)?.serverCount} servers to the listing`));
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
