import type { CountReading, CountSource } from '../source.js';
import { errorMessage } from '../../errors.js';

/*
 * The one look at a discord.js Client that every embedded source shares. `probeClient` runs in
 * the agent's process for a plain Client and, as source text, inside each shard or cluster
 * process for a ShardingManager or a ClusterManager; `readingFromProbes` turns the answers into
 * one reading. Nothing here imports discord.js: the package only has it as an optional peer.
 */

/** A discord.js `Collection` (a `Map`) as far as the sources read it. */
export interface CacheLike<V> {
  readonly size: number;
  values(): Iterable<V>;
}

/** The parts of a discord.js `Guild` the probe reads. */
export interface GuildLike {
  /** False while the guild is unavailable: in READY before its GUILD_CREATE, or in an outage. */
  available?: boolean;
  shardId?: number;
}

/** The parts of a discord.js `WebSocketShard` the probe reads. */
export interface WebSocketShardLike {
  id: number;
  /** discord.js `Status`: 0 is Ready. */
  status: number;
}

/** The parts of a discord.js `Client` the probe reads. */
export interface ProbedClient {
  guilds: { cache: CacheLike<GuildLike> };
  ws: { shards: CacheLike<WebSocketShardLike> };
  options: { shardCount?: number | null };
  isReady?(): boolean;
  readyTimestamp?: number | null;
}

/** What one Client (one process) knows about its own shards. Plain data: it crosses IPC. */
export interface ClientProbe {
  /** `client.isReady()`: the first login finished (it stays true through reconnects). */
  ready: boolean;
  /** `guilds.cache.size`. */
  guilds: number;
  /** The shards this Client runs, with their status and guilds. */
  shards: ShardProbe[];
  /** `options.shardCount`, the bot's total as this Client was told it. */
  shardCount: number | null;
}

/** One shard of a {@link ClientProbe}. */
interface ShardProbe {
  id: number;
  status: number;
  guilds: number;
  /** Guilds still unavailable: READY listed them but their GUILD_CREATE has not come. */
  unavailable: number;
}

/**
 * Reads a Client's shards and guilds. It must stay self-contained (no imports, no outer names,
 * no named inner functions): its source text is evaluated in other processes.
 */
export function probeClient(client: ProbedClient): ClientProbe {
  const shards: ShardProbe[] = [];
  for (const shard of client.ws.shards.values()) shards.push({ id: shard.id, status: shard.status, guilds: 0, unavailable: 0 });
  for (const guild of client.guilds.cache.values()) {
    const entry = shards.find((shard) => shard.id === guild.shardId);
    if (!entry) continue;
    entry.guilds += 1;
    if (guild.available === false) entry.unavailable += 1;
  }
  const ready = typeof client.isReady === 'function' ? client.isReady() : client.readyTimestamp != null;
  const shardCount = typeof client.options.shardCount === 'number' ? client.options.shardCount : null;
  return { ready, guilds: client.guilds.cache.size, shards, shardCount };
}

/**
 * {@link probeClient} as a script for `Shard#eval` and `Cluster#eval`, which run it with `this`
 * bound to the process's Client (discord.js `Client#_eval`). A string, not a function: a function
 * passed to `broadcastEval` is turned into text anyway, and a string cannot capture anything.
 */
export const PROBE_SCRIPT = `(${probeClient.toString()})(this)`;

/** The label of the probe of a Client in the agent's own process. */
const LOCAL_CLIENT = 'the Client';

/** One process's answer (or why there is none), named for the reason text (`shard 1`, `cluster 0`). */
export interface ProbePart {
  label: string;
  probe?: unknown;
  problem?: string;
}

const STATUS_NAMES = [
  'Ready',
  'Connecting',
  'Reconnecting',
  'Idle',
  'Nearly',
  'Disconnected',
  'WaitingForGuilds',
  'Identifying',
  'Resuming',
];

/** discord.js `Status` as a word for a reason (`Resuming`). */
function statusName(status: number): string {
  return STATUS_NAMES[status] ?? `status ${status}`;
}

/** An answer from another process is data from outside: check its shape before adding it up. */
function isClientProbe(value: unknown): value is ClientProbe {
  if (typeof value !== 'object' || value === null) return false;
  const probe = value as Partial<ClientProbe>;
  return (
    typeof probe.ready === 'boolean' &&
    typeof probe.guilds === 'number' &&
    Array.isArray(probe.shards) &&
    probe.shards.every(
      (s: Partial<ShardProbe> | null) =>
        typeof s === 'object' && s !== null && [s.id, s.status, s.guilds, s.unavailable].every((n) => typeof n === 'number'),
    )
  );
}

/** `0, 1 and 3`. */
export function listIds(ids: readonly number[]): string {
  if (ids.length <= 1) return ids.join('');
  return `${ids.slice(0, -1).join(', ')} and ${ids.at(-1)}`;
}

/**
 * Runs the probe in another process (`evaluate`, bounded by `timeoutMs`): its answer, or why it
 * cannot be read yet. An abort of `signal` is the one failure that goes up.
 */
export async function probeProcess(
  label: string,
  evaluate: () => Promise<unknown>,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<ProbePart> {
  try {
    return { label, probe: await withTimeout(evaluate(), timeoutMs, label, signal) };
  } catch (error) {
    signal?.throwIfAborted();
    return { label, problem: `cannot be read yet (${errorMessage(error)})` };
  }
}

/**
 * The reading of a manager that runs only some of the bot's shards (`expected`, fewer than
 * `total`): not ready, since the others run elsewhere; undefined when it runs them all.
 */
export function partialManagerReading(manager: string, expected: readonly number[], total: number): CountReading | undefined {
  if (expected.length >= total) return undefined;
  return {
    ready: false,
    reason: `counts not ready: ` +
      `this ${manager} runs shard${expected.length > 1 ? 's' : ''} ${listIds(expected)} of ${total}; the others run elsewhere, so it ` +
      `cannot count the whole bot: use the push source`,
  };
}

/**
 * Adds up per-process probes into one reading: ready only when every expected shard reported,
 * every reporting Client is ready, every shard's status is Ready and no guild is unavailable;
 * otherwise the reason names each process and shard still pending.
 */
export function readingFromProbes(parts: readonly ProbePart[], shardCount: number, expectedShardIds: readonly number[]): CountReading {
  const problems: string[] = [];
  const perShard = new Map<number, number>();
  let serverCount = 0;
  for (const part of parts) {
    if (part.problem !== undefined) {
      problems.push(`${part.label} ${part.problem}`);
      continue;
    }
    if (!isClientProbe(part.probe)) {
      problems.push(`${part.label} answered something that is not a discord.js Client's state`);
      continue;
    }
    const probe = part.probe;
    const pending = probe.shards.filter((s) => s.status !== 0).map((s) => `shard ${s.id} is ${statusName(s.status)}`);
    if (!probe.ready || probe.shards.length === 0) {
      const who = part.label === LOCAL_CLIENT ? LOCAL_CLIENT : `the Client of ${part.label}`;
      const detail = probe.shards.length === 0 ? 'has not logged in yet' : 'is not ready yet';
      problems.push(`${who} ${detail}${pending.length > 0 ? ` (${pending.join(', ')})` : ''}`);
    } else {
      problems.push(...pending);
    }
    for (const shard of probe.shards) {
      if (shard.unavailable > 0) {
        problems.push(
          `shard ${shard.id} has ${shard.unavailable} of ${shard.guilds} guilds still unavailable (its cache is filling, or Discord has ` +
            `an outage)`,
        );
      }
      perShard.set(shard.id, shard.guilds);
    }
    serverCount += probe.guilds;
  }
  const missing = expectedShardIds.filter((id) => !perShard.has(id));
  // A process that could not answer already explains its shards' absence.
  if (problems.length === 0 && missing.length > 0)
    problems.push(`no process reported shard${missing.length > 1 ? 's' : ''} ${listIds(missing)}`);
  if (problems.length > 0) return { ready: false, reason: `counts not ready: ${problems.join('; ')}` };
  return {
    ready: true,
    serverCount,
    shardCount,
    shards: Array.from({ length: shardCount }, (_, id) => perShard.get(id) ?? 0),
  };
}

/**
 * Waits for a cross-process answer at most `timeoutMs` (a process that is still starting may
 * never see the request) and gives up early when `signal` aborts.
 */
async function withTimeout<T>(work: Promise<T>, timeoutMs: number, what: string, signal?: AbortSignal): Promise<T> {
  signal?.throwIfAborted();
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} did not answer within ${timeoutMs} ms`)), timeoutMs);
        timer.unref();
        onAbort = () => reject(signal?.reason);
        signal?.addEventListener('abort', onAbort, { once: true });
      }),
    ]);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal?.removeEventListener('abort', onAbort);
  }
}

/** `[0, 1, ..., count - 1]`. */
export function range(count: number): number[] {
  return Array.from({ length: count }, (_, i) => i);
}

/** A discord.js `ShardClientUtil` (`client.shard`, set in a ShardingManager's shard process). */
export interface ShardClientUtilLike {
  /** Shards of the whole bot. */
  count: number;
  /** The shards this process runs. */
  ids?: number[];
  broadcastEval<T>(fn: (client: ProbedClient) => T): Promise<unknown>;
}

/** A discord-hybrid-sharding `ClusterClient` (`client.cluster`, set by the bot in a cluster process). */
export interface ClusterClientLike {
  id?: number;
  info?: { TOTAL_SHARDS?: number };
  broadcastEval(script: string, options?: { timeout?: number }): Promise<unknown>;
}

/** The parts of a discord.js `Client` {@link createDiscordClientSource} reads. */
export interface DiscordClientLike extends ProbedClient {
  shard?: ShardClientUtilLike | null;
  cluster?: ClusterClientLike | null;
}

/** Options of the embedded sources (Client, ShardingManager, ClusterManager). */
export interface EmbeddedSourceOptions {
  /** How long to wait for another process's answer. Default 5000 ms. */
  timeoutMs?: number;
}

/** The defaults of {@link EmbeddedSourceOptions}. */
export const EMBEDDED_SOURCE_DEFAULTS = { timeoutMs: 5_000 } as const satisfies Required<EmbeddedSourceOptions>;

/**
 * Counts from a discord.js Client in the agent's own process.
 *
 * - **Internal sharding** (one process runs every shard): guilds from `guilds.cache`, shards from
 *   `options.shardCount`; ready once the Client is ready, every shard is Ready and no guild is
 *   unavailable. A Client that runs only some of the shards, outside any manager, is never ready:
 *   it cannot see the others' guilds (the reason says to pass the manager or use the push source).
 * - **In a ShardingManager's shard process** (`client.shard` set): the Client alone knows only its
 *   shard, so the source reads the whole bot through `client.shard.broadcastEval`, the same probe
 *   on every shard, and is ready only when every shard is. Every shard process can post the same
 *   total; in practice run the agent in the manager process, or in one shard.
 * - **In a hybrid cluster** (`client.cluster` set, a discord-hybrid-sharding `ClusterClient`): the
 *   same through `client.cluster.broadcastEval`.
 */
export function createDiscordClientSource(client: DiscordClientLike, options: EmbeddedSourceOptions = {}): CountSource {
  const timeoutMs = options.timeoutMs ?? EMBEDDED_SOURCE_DEFAULTS.timeoutMs;
  const totalShards = () => client.cluster?.info?.TOTAL_SHARDS ?? client.shard?.count ?? client.options.shardCount ?? null;

  const readAll = async (what: string, ask: () => Promise<unknown>, signal?: AbortSignal): Promise<CountReading> => {
    const total = totalShards();
    if (typeof total !== 'number') return { ready: false, reason: 'counts not ready: the Client does not know the shard count yet' };
    let answers: unknown;
    try {
      answers = await withTimeout(ask(), timeoutMs, what, signal);
    } catch (error) {
      signal?.throwIfAborted();
      return { ready: false, reason: `counts not ready: the other processes cannot be read yet (${errorMessage(error)})` };
    }
    if (!Array.isArray(answers)) return { ready: false, reason: `counts not ready: ${what} answered something that is not a list` };
    return readingFromProbes(answers.map((probe, i) => ({ label: `process ${i}`, probe })), total, range(total));
  };

  const readLocal = (): CountReading => {
    const probe = probeClient(client);
    const owned = probe.shards.map((shard) => shard.id);
    const total = probe.shardCount ?? owned.length;
    if (owned.length > 0 && owned.length < total) {
      return {
        ready: false,
        reason: `counts not ready: this Client runs ` +
          `shard${owned.length > 1 ? 's' : ''} ${listIds(owned)} of ${total} outside any ShardingManager or cluster, so it cannot see ` +
          `the other shards' guilds: pass the manager to the agent, or use the push source`,
      };
    }
    return readingFromProbes([{ label: LOCAL_CLIENT, probe }], total, owned);
  };

  return {
    get description() {
      const total = totalShards();
      const shards = typeof total === 'number' ? `${total} shard${total === 1 ? '' : 's'}` : 'shards not known yet';
      if (client.cluster) return `discord.js Client in a discord-hybrid-sharding cluster (${shards} in all)`;
      if (client.shard) return `discord.js Client in a ShardingManager shard process (${shards} in all)`;
      return `discord.js Client (${shards})`;
    },
    read: async (signal) => {
      signal?.throwIfAborted();
      const cluster = client.cluster;
      if (cluster)
        return readAll('client.cluster.broadcastEval', () => cluster.broadcastEval(PROBE_SCRIPT, { timeout: timeoutMs }), signal);
      const shard = client.shard;
      if (shard) return readAll('client.shard.broadcastEval', () => shard.broadcastEval(probeClient), signal);
      return readLocal();
    },
  };
}
