import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, GatewayIntentBits, ShardingManager } from 'discord.js';
import { ClusterManager } from 'discord-hybrid-sharding';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createListingAgent, type ListingAgent } from '../../../src/index.js';
import { setupBot, startTestEmulator } from '../../helpers/emulator.js';
import { startFakeDiscord } from '../../helpers/fake-discord/index.js';
import { writeBotScript } from '../../helpers/fake-discord/bot-scripts.js';

/*
 * A sharded bot's mistakes, and messages that say what to do in the manager's process: commands
 * with a ShardingManager (which has no command cache), an agent created in each shard (the second
 * finds its sibling holding the state lock), and a Client destroyed before its agent started.
 */

const PROJECT_PACKAGE = join(import.meta.dirname, '../../../package.json');

const managers: ShardingManager[] = [];
const agents: ListingAgent[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const manager of managers.splice(0)) {
    manager.respawn = false;
    for (const shard of manager.shards.values()) if (shard.process ?? shard.worker) shard.kill();
  }
  await Promise.all(agents.splice(0).map((agent) => agent.stop({ deadlineMs: 3_000 })));
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'la-sharded-'));
  dirs.push(dir);
  return dir;
}

/**
 * A shard file that makes an agent in each shard, as a bot owner following the one-process
 * README would: the package by its name (the built one), the whole config from argv. Each
 * `error` the agent emits is appended to the file `out` as a JSON line with the shard's IDs.
 */
const AGENT_IN_EACH_SHARD = `
import { createRequire } from 'node:module';
import { appendFileSync } from 'node:fs';
const require = createRequire(${JSON.stringify(PROJECT_PACKAGE)});
const { Client, GatewayIntentBits } = require('discord.js');
const { createListingAgent } = require('listing-agent');
const [api, token, v1, v0, directory, out] = process.argv.slice(2);
const ws = { buildIdentifyThrottler: () => ({ waitForIdentify: async () => undefined }) };
const client = new Client({ intents: [GatewayIntentBits.Guilds], rest: { api }, ws });
const agent = createListingAgent({ token, discord: client, config: { service: { v1, v0 }, state: { directory }, health: { enabled: false } } });
agent.on('error', (error) => appendFileSync(out, JSON.stringify({ shards: client.shard.ids, message: error.message }) + '\\n'));
client.login();
`;

describe('a sharded bot', () => {
  it('with commands on and a ShardingManager or ClusterManager as discord: says to pass commands: [...], and syncs them when passed', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const file = await writeBotScript('shard.mjs', 'process.exit(0);\n');
    const shardingManager = new ShardingManager(file, { totalShards: 2, token: 'unused' });
    const clusterManager = new ClusterManager(file, { totalShards: 2, totalClusters: 1, token: 'unused' });
    const where = { service: { v1: emu.urls.v1, v0: emu.urls.v0 }, health: { enabled: false }, state: { directory: await tempDir() } };
    const config = { ...where, stats: { enabled: false }, commands: { enabled: true } };

    for (const [manager, name] of [[shardingManager, 'ShardingManager'], [clusterManager, 'ClusterManager']] as const) {
      const make = () => createListingAgent({ token: fx.projectToken, discord: manager, autoStart: false, config });
      expect(make).toThrow(
        `commands.source: is discord, but a ${name} has no command cache to read: pass the commands your bot registers to createListingAgent ` +
          "in the manager's process as `commands: [...]` (objects or discord.js builders), set discord.token to read them from Discord's API, or use source file",
      );
    }

    const agent = createListingAgent({ token: fx.projectToken, discord: shardingManager, autoStart: false, config, commands: [{ name: 'ping', description: 'Is the bot there?' }] });
    agents.push(agent);
    await agent.start();
    await vi.waitFor(() => expect(emu.admin.commands(fx.projectId)).toMatchObject([{ name: 'ping' }]), { timeout: 10_000, interval: 50 });
  });

  it("with an agent in each shard: the one that finds its sibling holding the state lock says to create the agent in the manager's process", { timeout: 60_000 }, async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const fake = await startFakeDiscord({ shardCount: 2, guilds: 4 });
    const dir = await tempDir();
    const out = join(dir, 'errors.jsonl');
    const file = await writeBotScript('shard.mjs', AGENT_IN_EACH_SHARD);
    const shardArgs = [fake.restUrl, fx.projectToken, emu.urls.v1, emu.urls.v0, join(dir, 'state'), out];
    const manager = new ShardingManager(file, { totalShards: 2, token: fake.token, shardArgs });
    managers.push(manager);
    await manager.spawn({ delay: 0, timeout: 15_000 });

    // The sibling's heartbeat keeps the lock fresh: the second agent refuses once it sees it move (within 5 s and a look).
    const errors = async () =>
      (await readFile(out, 'utf8').catch(() => ''))
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as { shards: number[]; message: string });
    await vi.waitFor(async () => expect(await errors()).toHaveLength(1), { timeout: 30_000, interval: 200 });
    const [refused] = await errors();
    const holder = refused!.shards[0] === 0 ? 1 : 0;
    expect(refused!.message).toMatch(
      new RegExp(
        `^the state directory .+ is already used by the agent of shard ${holder} of 2 \\(pid unknown\\) on host .+ since \\S+ \\(its owner keeps the lock fresh\\): ` +
          "the bot creates an agent in each shard; create the agent in the manager's process, not in each shard " +
          '\\(pass the ShardingManager or ClusterManager as `discord` to createListingAgent there\\)$',
      ),
    );
    // The holder runs on: its counts reach the service.
    await vi.waitFor(() => expect(emu.admin.metrics(fx.projectId).length).toBeGreaterThan(0), { timeout: 10_000, interval: 50 });
  });

  it('with a discord.js Client destroyed before its agent started: the agent stops and says nothing about the state store', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const directory = join(await tempDir(), 'state');
    const client = new Client({ intents: [GatewayIntentBits.Guilds] });
    const agent = createListingAgent({ token: fx.projectToken, discord: client, config: { service: { v1: emu.urls.v1, v0: emu.urls.v0 }, health: { enabled: false }, state: { directory } } });
    const errors: Error[] = [];
    agent.on('error', (error) => void errors.push(error));
    const stopped = new Promise<void>((resolve) => agent.once('stopped', () => resolve()));

    await client.destroy();
    await stopped;
    expect(agent.phase).toBe('stopped');
    expect(errors).toEqual([]);
    // Nothing was opened, so nothing was written: no state directory at all.
    await expect(readdir(directory)).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(agent.start()).rejects.toThrow('stopped');
  });
});
