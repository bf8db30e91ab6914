import type { CountReading, CountSource } from '../source.js';
import {
  EMBEDDED_SOURCE_DEFAULTS,
  PROBE_SCRIPT,
  listIds,
  partialManagerReading,
  probeProcess,
  range,
  readingFromProbes,
  type CacheLike,
  type EmbeddedSourceOptions,
  type ProbePart,
} from './discord-client.js';

/** The parts of a discord.js `Shard` (the manager's handle on one shard process) the source uses. */
export interface ManagedShardLike {
  id: number;
  /** False until the shard's Client is ready, and again while it reconnects or respawns. */
  ready?: boolean;
  /** `null` while the shard has no process (before its spawn, between death and respawn). */
  process?: object | null;
  /** The same in `worker` mode. */
  worker?: object | null;
  eval(script: string): Promise<unknown>;
}

/** The parts of a discord.js `ShardingManager` the source uses. */
export interface ShardingManagerLike {
  shards: CacheLike<ManagedShardLike>;
  /** `'auto'` until `spawn()` asked Discord for the recommended count. */
  totalShards: number | 'auto';
  /** The shards this manager runs (`'auto'`: all of them). */
  shardList?: number[] | 'auto';
  fetchClientValues(prop: string, shard?: number): Promise<unknown>;
}

/** One shard process's counts (the probe run in it), or why it cannot be read yet. */
export async function readManagedShard(shard: ManagedShardLike, timeoutMs: number, signal?: AbortSignal): Promise<ProbePart> {
  const label = `shard ${shard.id}`;
  // `undefined` means the object does not say (a structural stand-in): ask it anyway.
  if (shard.process === null && (shard.worker ?? null) === null) return { label, problem: 'has no process yet (spawning or respawning)' };
  if (shard.ready === false) return { label, problem: 'is not ready yet (its Client is logging in, reconnecting or respawning)' };
  return probeProcess(label, () => shard.eval(PROBE_SCRIPT), timeoutMs, signal);
}

/**
 * Counts from a discord.js ShardingManager, in the manager's process.
 *
 * Each shard process is asked on its own (`Shard#eval` of the same probe a Client source uses)
 * rather than with `fetchClientValues('guilds.cache.size')`: that call rejects as a whole while
 * any shard has no process ("Not all shards have spawned", "has no active process"), and a
 * process that is up but still filling its cache answers a count that is too low. Asking each
 * shard says which shard is pending and why, and the probe carries the shards' status and
 * unavailable guilds along with the counts.
 *
 * Not ready, never a throw, while: the manager has not spawned (`totalShards` still `'auto'`),
 * a shard has no process (spawning, respawning), a shard's Client is not ready or reconnecting,
 * a guild is unavailable, a process does not answer within `timeoutMs`, or the manager runs only
 * some of the bot's shards (the rest run elsewhere: use the push source).
 */
export function createShardingManagerSource(manager: ShardingManagerLike, options: EmbeddedSourceOptions = {}): CountSource {
  const timeoutMs = options.timeoutMs ?? EMBEDDED_SOURCE_DEFAULTS.timeoutMs;

  const readShard = (shard: ManagedShardLike, signal?: AbortSignal) => readManagedShard(shard, timeoutMs, signal);

  return {
    get description() {
      const total = manager.totalShards;
      return `discord.js ShardingManager ` +
        `(${total === 'auto' ? 'shard count not known until spawn' : `${total} shard${total === 1 ? '' : 's'}`})`;
    },
    read: async (signal): Promise<CountReading> => {
      signal?.throwIfAborted();
      const total = manager.totalShards;
      if (total === 'auto' || manager.shards.size === 0) {
        return { ready: false, reason: 'counts not ready: the ShardingManager has not spawned its shards yet' };
      }
      const expected = Array.isArray(manager.shardList) ? manager.shardList : range(total);
      const partial = partialManagerReading('ShardingManager', expected, total);
      if (partial) return partial;
      const shards = [...manager.shards.values()];
      const parts = await Promise.all(shards.map((shard) => readShard(shard, signal)));
      const spawned = new Set(shards.map((shard) => shard.id));
      const unspawned = expected.filter((id) => !spawned.has(id));
      if (unspawned.length > 0)
        parts.push({ label: `shard${unspawned.length > 1 ? 's' : ''} ${listIds(unspawned)}`, problem: 'not spawned yet' });
      return readingFromProbes(parts, total, expected);
    },
  };
}
