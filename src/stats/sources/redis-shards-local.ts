import type { CountReading } from '../source.js';
import { countSourceFor, isClusterManager, isDiscordClient, isErisClient, isOceanicClient, isShardingManager } from './detect.js';
import {
  EMBEDDED_SOURCE_DEFAULTS,
  probeClient,
  range,
  readingFromProbes,
  type DiscordClientLike,
  type EmbeddedSourceOptions,
} from './discord-client.js';
import { erisSnapshot, oceanicSnapshot, ownShardsFromGatewaySnapshot } from './eris-oceanic.js';
import { readClusterCounts, type ClusterManagerLike } from './hybrid-cluster.js';
import type { OwnShardsReading, OwnShardsSource } from './redis-shards-reports.js';
import { readManagedShard, type ShardingManagerLike } from './sharding-manager.js';

/*
 * Which shards a bot process holds, and their counts, for every embedded shape: what a shard
 * reporter writes to Redis. The whole-bot sources refuse a process that runs only some shards
 * (it cannot see the rest); a reporter wants exactly those, and Redis adds up the rest.
 *
 * - discord.js Client, on its own (`shards: [2, 3]`), in a ShardingManager shard process or in a
 *   hybrid cluster: the shards are `client.ws.shards` (discord.js fills it from `options.shards`,
 *   or from `SHARDS` / the cluster's `SHARD_LIST`), counted locally with the same probe; the total
 *   is the cluster's `TOTAL_SHARDS`, else `client.shard.count`, else `options.shardCount`.
 * - ShardingManager / ClusterManager: their `shardList` (all shards when empty or `'auto'`), each
 *   shard or cluster process asked with the probe.
 * - Eris / Oceanic.js Client (one cluster of a bot, `firstShardID`/`lastShardID` or `shardIDs`):
 *   the shards in `client.shards`, the total from its `maxShards`.
 */

/** The restriction of a whole-bot reading (indexed by shard ID) to `held`. */
function restrict(reading: CountReading, held: readonly number[]): OwnShardsReading {
  if (!reading.ready) return reading;
  const shards = new Map<number, number>();
  for (const id of held) shards.set(id, reading.shards?.[id] ?? 0);
  return { ready: true, shardCount: reading.shardCount, shards };
}

function clientOwnShards(client: DiscordClientLike): OwnShardsReading {
  const probe = probeClient(client);
  const held = probe.shards.map((shard) => shard.id);
  const total = client.cluster?.info?.TOTAL_SHARDS ?? client.shard?.count ?? probe.shardCount;
  if (typeof total !== 'number') return { ready: false, reason: 'counts not ready: the Client does not know the shard count yet' };
  return restrict(readingFromProbes([{ label: 'the Client', probe }], total, held), held);
}

async function shardingManagerOwnShards(manager: ShardingManagerLike, timeoutMs: number, signal?: AbortSignal): Promise<OwnShardsReading> {
  const total = manager.totalShards;
  if (total === 'auto' || manager.shards.size === 0)
    return { ready: false, reason: 'counts not ready: the ShardingManager has not spawned its shards yet' };
  const held = Array.isArray(manager.shardList) && manager.shardList.length > 0 ? manager.shardList : range(total);
  const shards = [...manager.shards.values()];
  const parts = await Promise.all(shards.map((shard) => readManagedShard(shard, timeoutMs, signal)));
  const spawned = new Set(shards.map((shard) => shard.id));
  const unspawned = held.filter((id) => !spawned.has(id));
  if (unspawned.length > 0) parts.push({ label: `shards ${unspawned.join(', ')}`, problem: 'not spawned yet' });
  return restrict(readingFromProbes(parts, total, held), held);
}

async function clusterManagerOwnShards(manager: ClusterManagerLike, timeoutMs: number, signal?: AbortSignal): Promise<OwnShardsReading> {
  const total = manager.totalShards;
  if (!(total > 0) || manager.clusters.size === 0)
    return { ready: false, reason: 'counts not ready: the ClusterManager has not spawned its clusters yet' };
  const held = manager.shardList && manager.shardList.length > 0 ? manager.shardList : range(total);
  const clusters = [...manager.clusters.values()];
  const parts = await Promise.all(clusters.map((cluster) => readClusterCounts(cluster, timeoutMs, signal)));
  const wanted = manager.totalClusters ?? -1;
  if (wanted > clusters.length) parts.push({ label: `${wanted - clusters.length} of ${wanted} clusters`, problem: 'not spawned yet' });
  return restrict(readingFromProbes(parts, total, held), held);
}

/**
 * The count source for the bot object of embedded mode ({@link countSourceFor}: `read()` is the
 * whole bot's), plus `readOwnShards()`: the shards this process holds, for a shard reporter. Pass
 * it as the reporter's `source` so that a process running only some of the bot's shards (a Client
 * with `shards: [2, 3]`, one ShardingManager of several machines) reports them.
 *
 * @throws ConfigError (code `config`) for an object that is no discord.js Client, ShardingManager
 *   or ClusterManager, Eris or Oceanic.js Client.
 */
export function ownShardsSourceFor(bot: unknown, options: EmbeddedSourceOptions = {}): OwnShardsSource {
  const whole = countSourceFor(bot, options);
  const timeoutMs = options.timeoutMs ?? EMBEDDED_SOURCE_DEFAULTS.timeoutMs;
  const readOwnShards = async (signal?: AbortSignal): Promise<OwnShardsReading> => {
    signal?.throwIfAborted();
    if (isClusterManager(bot)) return clusterManagerOwnShards(bot, timeoutMs, signal);
    if (isShardingManager(bot)) return shardingManagerOwnShards(bot, timeoutMs, signal);
    if (isDiscordClient(bot)) return clientOwnShards(bot);
    if (isErisClient(bot)) return ownShardsFromGatewaySnapshot(erisSnapshot(bot));
    if (isOceanicClient(bot)) return ownShardsFromGatewaySnapshot(oceanicSnapshot(bot));
    // countSourceFor threw already for anything else.
    return { ready: false, reason: 'counts not ready: not a bot object the agent can read' };
  };
  return {
    get description() {
      return whole.description;
    },
    read: (signal) => whole.read(signal),
    readOwnShards,
  };
}
