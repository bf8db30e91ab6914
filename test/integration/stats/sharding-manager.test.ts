import { once } from 'node:events';
import { ShardingManager } from 'discord.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createDiscordClientSource, type DiscordClientLike } from '../../../src/stats/sources/discord-client.js';
import { createShardingManagerSource } from '../../../src/stats/sources/sharding-manager.js';
import type { CountReading } from '../../../src/stats/source.js';
import { startFakeDiscord, type FakeDiscord } from '../../helpers/fake-discord/index.js';
import { SHARD_SCRIPT, writeBotScript } from '../../helpers/fake-discord/bot-scripts.js';

const managers: ShardingManager[] = [];
afterEach(() => {
  for (const manager of managers.splice(0)) {
    manager.respawn = false;
    for (const shard of manager.shards.values()) {
      // Shard#kill throws for a shard whose process is already gone.
      if (shard.process ?? shard.worker) shard.kill();
    }
  }
});

/** A real ShardingManager whose 2 shard processes log in to the fake; spawned without waiting. */
async function spawnManager(fake: FakeDiscord): Promise<ShardingManager> {
  const file = await writeBotScript('shard.mjs', SHARD_SCRIPT);
  const manager = new ShardingManager(file, { totalShards: 2, token: fake.token, shardArgs: [fake.restUrl] });
  managers.push(manager);
  return manager;
}

async function readsEventually(read: () => Promise<CountReading>, expected: CountReading) {
  await vi.waitFor(async () => expect(await read()).toEqual(expected), { timeout: 10_000, interval: 50 });
}

describe('stats source: discord.js ShardingManager with real shard processes', () => {
  it('reads per-shard counts and the true total, follows joins and leaves, and is not ready while a shard respawns', async () => {
    const fake = await startFakeDiscord({ shardCount: 2, guilds: 6 });
    const manager = await spawnManager(fake);
    const source = createShardingManagerSource(manager, { timeoutMs: 2_000 });
    expect(await source.read()).toEqual({ ready: false, reason: 'counts not ready: the ShardingManager has not spawned its shards yet' });

    // timeout -1: spawn() returns once both processes exist, before their Clients are ready.
    await manager.spawn({ delay: 0, timeout: -1 });
    const starting = await source.read();
    expect(starting).toEqual({ ready: false, reason: expect.stringMatching(/^counts not ready: shard 0 is not ready yet .*; shard 1 is not ready yet/) });
    expect(source.description).toBe('discord.js ShardingManager (2 shards)');

    await readsEventually(() => source.read(), { ready: true, serverCount: 6, shardCount: 2, shards: [3, 3] });

    const joined = [fake.gateway.addGuild(), fake.gateway.addGuild(), fake.gateway.addGuild()];
    fake.gateway.removeGuild(joined[0]!);
    await readsEventually(() => source.read(), {
      ready: true,
      serverCount: 8,
      shardCount: 2,
      shards: [fake.gateway.guildCount(0), fake.gateway.guildCount(1)],
    });

    const shard1 = manager.shards.get(1)!;
    const death = once(shard1, 'death');
    shard1.process!.kill();
    await death;
    // The manager respawns it at once: a new process whose Client is not ready yet.
    const respawning = await source.read();
    expect(respawning).toEqual({ ready: false, reason: expect.stringContaining('shard 1 ') });
    expect(respawning).not.toMatchObject({ reason: expect.stringContaining('shard 0') });

    await once(shard1, 'ready');
    await readsEventually(() => source.read(), { ready: true, serverCount: 8, shardCount: 2, shards: [fake.gateway.guildCount(0), fake.gateway.guildCount(1)] });
    expect(fake.gateway.events.filter((e) => e.type === 'identify' && e.shardId === 1)).toHaveLength(2);
  });

  it('reads the whole bot from inside a shard process through client.shard.broadcastEval', async () => {
    const fake = await startFakeDiscord({ shardCount: 2, guilds: 5 });
    const manager = await spawnManager(fake);
    await manager.spawn({ delay: 0, timeout: 15_000 });
    // What a shard's ShardClientUtil does: its broadcastEval goes to the manager, which evaluates
    // the function's text in every shard. The Client here is shard 0's view: no guilds of its own.
    const shardZero: DiscordClientLike = {
      guilds: { cache: new Map() },
      ws: { shards: new Map([[0, { id: 0, status: 0 }]]) },
      options: { shardCount: 2 },
      shard: { count: 2, ids: [0], broadcastEval: (fn) => manager.broadcastEval(fn as never) },
    };
    const source = createDiscordClientSource(shardZero, { timeoutMs: 2_000 });
    expect(source.description).toBe('discord.js Client in a ShardingManager shard process (2 shards in all)');
    await readsEventually(() => source.read(), { ready: true, serverCount: 5, shardCount: 2, shards: [3, 2] });

    // A shard without a process makes the manager's broadcastEval reject: not ready, with the reason.
    manager.respawn = false;
    const shard1 = manager.shards.get(1)!;
    const death = once(shard1, 'death');
    shard1.process!.kill();
    await death;
    expect(await source.read()).toEqual({ ready: false, reason: expect.stringContaining('the other processes cannot be read yet (Shard 1 has no active process or worker.)') });
  });
});
