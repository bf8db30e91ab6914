/*
 * A bot process for the shard aggregation tests, run as a child with ts-register.mjs: a discord.js
 * Client on some of the bot's shards against the fake gateway, and a shard reporter writing them to
 * Redis, as an embedded agent would.
 *
 * argv: <fake REST URL> <token> <shard IDs, comma separated> <shard count> <redis URL> <prefix>
 * stdout: `ready` once the Client is ready; then `reported <ids>` after each round that wrote.
 */
import { Client, Events, GatewayIntentBits } from 'discord.js';
import { createRedisConnection } from '../../src/redis/connection.js';
import { createShardReporter } from '../../src/stats/sources/redis-shards.js';
import { ownShardsSourceFor } from '../../src/stats/sources/redis-shards-local.js';

const [api, token, shardList, shardCount, url, prefix] = process.argv.slice(2);
const shards = shardList!.split(',').map(Number);

const client = new Client({
  intents: [GatewayIntentBits.Guilds],
  shards,
  shardCount: Number(shardCount),
  rest: { api: api! },
  // The fake gateway does not need Discord's 5 s between identifies.
  ws: { buildIdentifyThrottler: () => ({ waitForIdentify: async () => undefined }) },
});
const connection = createRedisConnection({ url: url!, prefix: prefix!, reconnectDelaysMs: [50] });
connection.start();
const source = ownShardsSourceFor(client);

client.once(Events.ClientReady, () => process.stdout.write('ready\n'));
await client.login(token);
await connection.whenUp({ timeoutMs: 5_000 });

const reporter = createShardReporter({ connection, source, everyMs: 200, ttlMs: 1_500, unref: false, process: `shards-${shardList}` });
// The reporter's own timer, with a print after each round for the test to follow.
for (;;) {
  const written = await reporter.reportNow().catch(() => []);
  if (written.length > 0) process.stdout.write(`reported ${written.join(',')}\n`);
  await new Promise((resolve) => setTimeout(resolve, 200));
}
