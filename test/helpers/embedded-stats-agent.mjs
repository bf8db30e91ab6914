/**
 * A bot's process with an embedded agent posting stats only (health off, counts from its own
 * `countSource`), for test/integration/cli/idle-modules.test.ts: imports the built package's root
 * (dist/index.js), starts the agent against the service at LISTING_V1 / LISTING_V0, and after its
 * first post prints `posted`; run under test/helpers/module-list.mjs, SIGUSR2 then lists its modules.
 */
import { createListingAgent } from '../../dist/index.js';

const env = process.env;
const agent = createListingAgent({
  token: env.LISTING_TOKEN,
  config: { service: { v1: env.LISTING_V1, v0: env.LISTING_V0 }, stats: { enabled: true }, health: { enabled: false }, state: { directory: env.STATE_DIR } },
  countSource: { description: 'the test bot', read: async () => ({ ready: true, serverCount: 42, shardCount: 1 }) },
});
agent.on('error', (error) => console.error(`agent error: ${error.message}`));
agent.once('posted', () => console.log('posted'));
// The bot's own gateway connection keeps its process alive; here an interval stands in for it.
const alive = setInterval(() => undefined, 60_000);
await agent.start();
process.on('SIGTERM', () => void agent.stop().then(() => clearInterval(alive)));
