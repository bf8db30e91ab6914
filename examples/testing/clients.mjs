/**
 * The bot's Client, pointed at the fake Discord of `listing-agent/testing`, for each library the
 * agent follows. A bot keeps the one it uses. Each points the Client's REST at `kit.discord.restUrl`;
 * the gateway's URL comes from the fake's `GET /gateway/bot`, as from Discord's. Only the library
 * the test asks for is loaded.
 *
 * @typedef {{ discord: { restUrl: string; token: string; erisRestOptions(): { agent: import('node:https').Agent; domain: string } } }} Kit
 * @typedef {{ client: unknown; login(): Promise<unknown>; stop(): Promise<void> }} Bot
 */

/**
 * discord.js 14: `rest.api` is the REST base.
 * @param {Kit} kit
 * @returns {Promise<Bot>}
 */
async function discordJs(kit) {
  const { Client, GatewayIntentBits } = await import('discord.js');
  const client = new Client({ intents: [GatewayIntentBits.Guilds], rest: { api: kit.discord.restUrl } });
  return { client, login: () => client.login(kit.discord.token), stop: () => client.destroy() };
}

/**
 * Eris 0.18: it speaks HTTPS only, to a host without a port; `erisRestOptions()` hands it a plain
 * socket to the fake.
 * @param {Kit} kit
 * @returns {Promise<Bot>}
 */
async function eris(kit) {
  const { Client } = await import('eris');
  const client = new Client(`Bot ${kit.discord.token}`, { intents: ['guilds'], rest: kit.discord.erisRestOptions() });
  // As every Eris bot must: an 'error' without a listener throws.
  client.on('error', (error) => console.error('eris:', error));
  return { client, login: () => client.connect(), stop: async () => client.disconnect({ reconnect: false }) };
}

/**
 * Oceanic.js 1.x: `rest.baseURL` is the REST base with its version.
 * @param {Kit} kit
 * @returns {Promise<Bot>}
 */
async function oceanic(kit) {
  const { Client } = await import('oceanic.js');
  const client = new Client({
    auth: `Bot ${kit.discord.token}`,
    rest: { baseURL: `${kit.discord.restUrl}/v10` },
    gateway: { intents: ['GUILDS'] },
  });
  client.on('error', (error) => console.error('oceanic.js:', error));
  return { client, login: () => client.connect(), stop: async () => client.disconnect(false) };
}

/**
 * The bot's Client for `library` (`discord.js`, `eris` or `oceanic.js`) on the kit's fake Discord.
 * @param {string} library
 * @param {Kit} kit
 * @returns {Promise<Bot>}
 */
export function botClient(library, kit) {
  if (library === 'discord.js') return discordJs(kit);
  if (library === 'eris') return eris(kit);
  if (library === 'oceanic.js') return oceanic(kit);
  throw new Error(`BOT_LIBRARY: ${library} is none of discord.js, eris, oceanic.js`);
}
