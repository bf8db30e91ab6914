import { once } from 'node:events';
import { ClusterManager } from 'discord-hybrid-sharding';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createDiscordClientSource, type DiscordClientLike } from '../../../src/stats/sources/discord-client.js';
import { createClusterManagerSource } from '../../../src/stats/sources/hybrid-cluster.js';
import type { CountReading } from '../../../src/stats/source.js';
import { CLUSTER_SCRIPT, writeBotScript } from '../../helpers/fake-discord/bot-scripts.js';
import { startFakeDiscord } from '../../helpers/fake-discord/index.js';

const managers: ClusterManager[] = [];
afterEach(() => {
  for (const manager of managers.splice(0)) {
    manager.respawn = false;
    for (const cluster of manager.clusters.values()) cluster.kill({ force: true });
  }
});

/**
 * `manager.spawn()` with 1 ms between clusters: the fake gateway has no identify limit. spawn()
 * warns (process.emitWarning, code CLUSTER_MANAGER) about any delay under Discord's 7 s, a warning
 * meant for a real bot: it is left out here, so that the suite prints none (runtime matrix).
 */
async function spawnWithoutDelay(manager: ClusterManager): Promise<void> {
  const emitWarning = process.emitWarning;
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    if ((rest[0] as { code?: unknown } | undefined)?.code === 'CLUSTER_MANAGER') return;
    (emitWarning as (...args: unknown[]) => void).call(process, warning, ...rest);
  }) as typeof process.emitWarning;
  try {
    // The warning is emitted before spawn()'s first await.
    const spawning = manager.spawn({ delay: 1, timeout: -1 });
    process.emitWarning = emitWarning;
    await spawning;
  } finally {
    process.emitWarning = emitWarning;
  }
}

async function readsEventually(read: () => Promise<CountReading>, expected: CountReading) {
  await vi.waitFor(async () => expect(await read()).toEqual(expected), { timeout: 10_000, interval: 50 });
}

describe('stats source: discord-hybrid-sharding ClusterManager with real cluster processes', () => {
  it('reads per-shard counts and the true total over 2 clusters, follows joins and leaves, and is not ready while a cluster respawns', async () => {
    const fake = await startFakeDiscord({ shardCount: 4, guilds: 8 });
    const file = await writeBotScript('cluster.mjs', CLUSTER_SCRIPT);
    const manager = new ClusterManager(file, {
      totalShards: 4,
      totalClusters: 2,
      token: fake.token,
      shardArgs: [fake.restUrl],
      // spawn()'s default waits 7 s per shard between clusters, against Discord's identify limit.
      spawnOptions: { delay: 1, timeout: -1 },
    });
    managers.push(manager);
    const source = createClusterManagerSource(manager, { timeoutMs: 2_000 });
    expect(await source.read()).toEqual({ ready: false, reason: 'counts not ready: the ClusterManager has not spawned its clusters yet' });

    await spawnWithoutDelay(manager);
    expect(source.description).toBe('discord-hybrid-sharding ClusterManager (4 shards in 2 clusters)');
    await readsEventually(() => source.read(), { ready: true, serverCount: 8, shardCount: 4, shards: [2, 2, 2, 2] });

    fake.gateway.addGuild();
    fake.gateway.addGuild();
    fake.gateway.removeGuild(fake.gateway.guildIds(3)[0]!);
    const perShard = () => [0, 1, 2, 3].map((id) => fake.gateway.guildCount(id));
    await readsEventually(() => source.read(), { ready: true, serverCount: 9, shardCount: 4, shards: perShard() });

    const cluster1 = manager.clusters.get(1)!;
    const death = once(cluster1, 'death');
    // A crash, not Cluster#kill (which detaches the exit listener, so nothing would respawn).
    const child = cluster1.thread?.process;
    if (!child || !('kill' in child)) throw new Error('cluster 1 should run in a child process');
    child.kill('SIGKILL');
    await death;
    const respawning = await source.read();
    expect(respawning).toEqual({ ready: false, reason: expect.stringMatching(/cluster 1\b|shard [23]\b/) });

    await readsEventually(() => source.read(), { ready: true, serverCount: 9, shardCount: 4, shards: perShard() });
    expect(fake.gateway.events.filter((e) => e.type === 'identify' && e.shardId === 3)).toHaveLength(2);

    // Inside a cluster, a Client source reads the whole bot through client.cluster.broadcastEval,
    // which the ClusterClient forwards to the manager's broadcastEval: the same path, minus IPC.
    const inCluster: DiscordClientLike = {
      guilds: { cache: new Map() },
      ws: { shards: new Map() },
      options: { shardCount: 4 },
      cluster: { info: { TOTAL_SHARDS: 4 }, broadcastEval: (script, options) => manager.broadcastEval(script, options) },
    };
    const clientSource = createDiscordClientSource(inCluster, { timeoutMs: 2_000 });
    expect(clientSource.description).toBe('discord.js Client in a discord-hybrid-sharding cluster (4 shards in all)');
    expect(await clientSource.read()).toEqual({ ready: true, serverCount: 9, shardCount: 4, shards: perShard() });
  });
});
