/**
 * A discord.js bot (one process, an ES module in TypeScript) with listing-agent in place of
 * topgg-autoposter and @top-gg/sdk: docs/migrating.md walks through it.
 *
 * - The server count is posted from the client's cache (what the auto-poster did), once the
 *   client is ready and whenever it changes.
 * - Each vote is rewarded once, across restarts: the voter gets a role in the bot's support
 *   server (`SUPPORT_GUILD_ID`, `VOTER_ROLE_ID`). A throw is a failed reward, retried.
 * - `/perk` answers from `agent.hasVoted`, cached (what `api.hasVoted` did).
 *
 * Its settings are read as the daemon reads them (`loadConfig`): `LISTING_AGENT_*` variables, a
 * `.env` file in the working directory, and the config file `LISTING_AGENT_CONFIG` names. The
 * project token is `LISTING_AGENT_SERVICE_TOKEN`; the Discord bot token is `DISCORD_TOKEN`, the
 * bot's own. Compiled with `tsc` (module nodenext) and run with node:
 *
 *   LISTING_AGENT_SERVICE_TOKEN=... DISCORD_TOKEN=... SUPPORT_GUILD_ID=... VOTER_ROLE_ID=... node bot.js
 */
import { Client, Events, GatewayIntentBits } from 'discord.js';
import { createListingAgent, loadConfig } from 'listing-agent';

const { SUPPORT_GUILD_ID, VOTER_ROLE_ID } = process.env;
const { input } = await loadConfig({ env: process.env, cwd: process.cwd() });

const client = new Client({ intents: [GatewayIntentBits.Guilds] });
// Votes on unless the settings turn them off. The agent starts once the client is ready, and
// client.destroy() stops it first.
const agent = createListingAgent({ discord: client, config: { ...input, votes: { enabled: true, ...input.votes } } });

// The reward hook: attached before the agent starts (here, before login), so that no vote goes by
// without it. Idempotent: a role given twice is given once.
agent.on('vote', async (vote) => {
  if (SUPPORT_GUILD_ID === undefined || VOTER_ROLE_ID === undefined || vote.platformId === null) return;
  const guild = client.guilds.cache.get(SUPPORT_GUILD_ID) ?? (await client.guilds.fetch(SUPPORT_GUILD_ID));
  await guild.members.addRole({ user: vote.platformId, role: VOTER_ROLE_ID, reason: `voted on the listing (${vote.key})` });
  console.log(`rewarded ${vote.platformId} for vote ${vote.key}`);
});

client.on(Events.InteractionCreate, async (interaction) => {
  if (!interaction.isChatInputCommand() || interaction.commandName !== 'perk') return;
  const voted = await agent.hasVoted(interaction.user.id, { source: 'discord' });
  await interaction.reply(voted ? 'Thanks for voting: the perk is yours.' : 'Vote for the bot on the listing to unlock the perk.');
});

agent.once('posted', (result) => console.log(`posted ${result.samples.at(-1)?.serverCount} servers to the listing`));
await client.login(process.env.DISCORD_TOKEN);
