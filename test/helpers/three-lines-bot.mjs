/**
 * A bot's process with the README's embedded agent: a discord.js Client on the fake Discord and
 * `createListingAgent({ token, discord: client })`, nothing else of the agent's (no logger, no
 * error listener), for test/integration/agent/default-log.test.ts. Only where the service and the
 * state are, and a free health port, are the test's. It imports the built package (dist/).
 *
 * env: LISTING_TOKEN, LISTING_V1, LISTING_V0, STATE_DIR, DISCORD_API, DISCORD_TOKEN, and
 * LOGGER_OFF=1 to pass `logger: false`. Its own lines go to stdout (stderr is the agent's):
 * `service refused` once the service refused the token, `posted` after the first post. SIGTERM
 * destroys the client, which stops the agent; the process then ends by itself.
 */
import { Client, GatewayIntentBits } from 'discord.js';
import { createListingAgent } from '../../dist/index.js';

const env = process.env;
const client = new Client({
  intents: [GatewayIntentBits.Guilds],
  rest: { api: env.DISCORD_API },
  ws: { buildIdentifyThrottler: () => ({ waitForIdentify: async () => undefined }) },
});
const config = { service: { v1: env.LISTING_V1, v0: env.LISTING_V0 }, health: { listen: '127.0.0.1:0' }, state: { directory: env.STATE_DIR } };

const agent = createListingAgent({ token: env.LISTING_TOKEN, discord: client, config, ...(env.LOGGER_OFF === '1' ? { logger: false } : {}) });

agent.on('readiness', (component, state) => {
  if (component === 'service' && !state.ready && / 40[13]\b/.test(state.detail)) console.log('service refused');
});
agent.once('posted', () => console.log('posted'));
process.once('SIGTERM', () => void client.destroy());
await client.login(env.DISCORD_TOKEN);
