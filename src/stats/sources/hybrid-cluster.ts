import type { CountReading, CountSource } from '../source.js';
import {
  EMBEDDED_SOURCE_DEFAULTS,
  PROBE_SCRIPT,
  partialManagerReading,
  probeProcess,
  range,
  readingFromProbes,
  type CacheLike,
  type EmbeddedSourceOptions,
  type ProbePart,
} from './discord-client.js';

/** The parts of a discord-hybrid-sharding `Cluster` (one cluster process) the source uses. */
export interface ClusterLike {
  id: number;
  /** The shards this cluster runs. */
  shardList?: number[];
  /** `null` while the cluster has no process or worker (spawning, respawning, killed). */
  thread?: object | null;
  /** discord-hybrid-sharding's own answer timeout is the third argument. */
  eval(script: string, context?: unknown, timeout?: number): Promise<unknown>;
}

/** The parts of a discord-hybrid-sharding `ClusterManager` the source uses. */
export interface ClusterManagerLike {
  clusters: CacheLike<ClusterLike>;
  /** `-1` (auto) until `spawn()` asked Discord for the recommended count. */
  totalShards: number;
  /** `-1` (auto) until `spawn()`. */
  totalClusters?: number;
  /** The shards this manager runs; empty means all of them. */
  shardList?: number[];
  fetchClientValues(prop: string, cluster?: number): Promise<unknown>;
}

/** One cluster's counts (the probe run in it), or why it cannot be read yet. */
export async function readClusterCounts(cluster: ClusterLike, timeoutMs: number, signal?: AbortSignal): Promise<ProbePart> {
  const label = `cluster ${cluster.id}`;
  if (cluster.thread === null) return { label, problem: 'has no process yet (spawning or respawning)' };
  return probeProcess(label, () => cluster.eval(PROBE_SCRIPT, undefined, timeoutMs), timeoutMs, signal);
}

/**
 * Counts from a discord-hybrid-sharding ClusterManager, in the manager's process. Detected by
 * shape; the package is an optional peer and never imported.
 *
 * Its `fetchClientValues` and `broadcastEval` answer one value per cluster, not per shard, and
 * reject as a whole when a cluster has no process. So each cluster is asked on its own
 * (`Cluster#eval` of the probe a Client source uses), and the probe splits its guilds by shard:
 * per-shard counts for v0, and a reason naming the cluster or shard that is pending.
 * `Cluster#ready` is not required: it is set only if the bot calls `client.cluster.triggerReady()`;
 * the probe reads the Client's own readiness instead.
 */
export function createClusterManagerSource(manager: ClusterManagerLike, options: EmbeddedSourceOptions = {}): CountSource {
  const timeoutMs = options.timeoutMs ?? EMBEDDED_SOURCE_DEFAULTS.timeoutMs;

  const readCluster = (cluster: ClusterLike, signal?: AbortSignal) => readClusterCounts(cluster, timeoutMs, signal);

  return {
    get description() {
      const total = manager.totalShards;
      const clusters = manager.totalClusters ?? -1;
      return `discord-hybrid-sharding ClusterManager ` +
        `(${total > 0 ? `${total} shard${total === 1 ? '' : 's'}` : 'shard count not known until ' +
        'spawn'}${clusters > 0 ? ` in ${clusters} cluster${clusters === 1 ? '' : 's'}` : ''})`;
    },
    read: async (signal): Promise<CountReading> => {
      signal?.throwIfAborted();
      const total = manager.totalShards;
      if (!(total > 0) || manager.clusters.size === 0) {
        return { ready: false, reason: 'counts not ready: the ClusterManager has not spawned its clusters yet' };
      }
      const expected = manager.shardList && manager.shardList.length > 0 ? manager.shardList : range(total);
      const partial = partialManagerReading('ClusterManager', expected, total);
      if (partial) return partial;
      const clusters = [...manager.clusters.values()];
      const parts = await Promise.all(clusters.map((cluster) => readCluster(cluster, signal)));
      const wanted = manager.totalClusters ?? -1;
      // Clusters are created one by one by spawn()'s queue: the missing ones own the missing shards.
      if (wanted > clusters.length) parts.push({ label: `${wanted - clusters.length} of ${wanted} clusters`, problem: 'not spawned yet' });
      return readingFromProbes(parts, total, expected);
    },
  };
}
