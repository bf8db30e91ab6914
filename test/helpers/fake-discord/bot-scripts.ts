import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach } from 'vitest';

/** The project's package.json: the child scripts resolve discord.js from here. */
const PROJECT_PACKAGE = resolve(import.meta.dirname, '../../../package.json');

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

/** The head of every bot script: discord.js resolved from the project, the fake's REST URL from argv. */
const HEAD = `
import { createRequire } from 'node:module';
const require = createRequire(${JSON.stringify(PROJECT_PACKAGE)});
const { Client, GatewayIntentBits } = require('discord.js');
const api = process.argv[2];
// No identify spacing: the fake gateway does not need Discord's 5 s between identifies.
const ws = { buildIdentifyThrottler: () => ({ waitForIdentify: async () => undefined }) };
`;

/** A ShardingManager shard file: discord.js takes SHARDS, SHARD_COUNT and DISCORD_TOKEN from the env. */
export const SHARD_SCRIPT = `${HEAD}
const client = new Client({ intents: [GatewayIntentBits.Guilds], rest: { api }, ws });
client.login();
`;

/** A discord-hybrid-sharding cluster file, as its README writes one. */
export const CLUSTER_SCRIPT = `${HEAD}
const { ClusterClient, getInfo } = require('discord-hybrid-sharding');
const info = getInfo();
const client = new Client({ intents: [GatewayIntentBits.Guilds], shards: info.SHARD_LIST, shardCount: info.TOTAL_SHARDS, rest: { api }, ws });
client.cluster = new ClusterClient(client);
client.once('clientReady', () => client.cluster.triggerReady());
client.login(process.env.DISCORD_TOKEN);
`;

/** Writes a bot script to a temp dir (removed after the test) and returns its path. */
export async function writeBotScript(name: string, text: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'listing-agent-bot-'));
  dirs.push(dir);
  const file = join(dir, name);
  await writeFile(file, text);
  return file;
}
