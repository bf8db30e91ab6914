'use strict';
/*
 * One shard of the bot in manager.cjs (its ShardingManager starts one process per shard, with
 * SHARDS, SHARD_COUNT and DISCORD_TOKEN set). No agent here: the manager's process has the one
 * agent. `/perk` asks the service whether the user has voted from this process, with a client of
 * its own on the same settings (the manager's environment, which every shard inherits).
 */
const { Client, Events, GatewayIntentBits } = require('discord.js');
const { loadConfig } = require('listing-agent');
const { createListingClient } = require('listing-agent/client');
const { createHasVoted } = require('listing-agent/votes');

const client = new Client({ intents: [GatewayIntentBits.Guilds] });

// A "yes" is cached until the vote expires, a "no" for 30 s: one request per user, not per command.
const votes = loadConfig({ env: process.env, cwd: process.cwd() }).then(({ config }) => {
  const { token, v1, v0 } = config.service;
  return createHasVoted({ client: createListingClient({ projectToken: token, v1BaseUrl: v1, v0BaseUrl: v0 }) });
});

client.on(Events.InteractionCreate, async (interaction) => {
  if (!interaction.isChatInputCommand() || interaction.commandName !== 'perk') return;
  const voted = await (await votes).hasVoted(interaction.user.id, { source: 'discord' });
  await interaction.reply(voted ? 'Thanks for voting: the perk is yours.' : 'Vote for the bot on the listing to unlock the perk.');
});

client.login();
