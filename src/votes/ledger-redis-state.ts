import type { AgentLogger } from '../log/agent-logger.js';
import { redisFailure, type RedisConnection } from '../redis/connection.js';
import { StoreError } from '../store/errors.js';
import type { createKnownKeys } from './ledger-redis-known.js';
import type { WriteQueue } from './ledger-redis-queue.js';
import { parseCounts, parseEntries, type LedgerCounts } from './ledger-redis-scripts.js';
import { expiresAtMs } from './ledger-state.js';
import type { LedgerEntry, Vote } from './types.js';

/** The state of one Redis vote ledger (`ledger-redis.ts`), and the steps every operation shares. */

/**
 * Vote keys whose claim by this agent is unknown or unconfirmed (a `recordPending` reply lost, a
 * sweep's claim the replicas did not confirm), looked up again by the next sweep; at most this many.
 */
export const MAX_UNCERTAIN = 10_000;

/** Index entries one compaction round trip looks at (keeps each script short for Redis). */
export const COMPACT_BATCH = 1_000;

export type Scripts = Record<'recordPending' | 'apply' | 'claim' | 'take' | 'compact', ReturnType<RedisConnection['script']>>;

/** The state of one Redis ledger. */
export interface RedisVoteLedgerState {
  readonly connection: RedisConnection;
  readonly agentId: string;
  readonly leaseMs: number;
  readonly keepKeysForMs: number;
  readonly now: () => number;
  readonly logger: AgentLogger;
  readonly closeTimeoutMs: number;
  readonly description: string;
  /** pending, dead letters, vote index, vote sequence: the keys of every script. */
  readonly keys: string[];
  /** `<prefix>vote:`: a vote's record is this and its key (declared in every script that touches it). */
  readonly recordPrefix: string;
  /** `<prefix>agent:`: an agent's heartbeat is this and its ID. */
  readonly agentPrefix: string;
  readonly adoptOrphans: boolean;
  readonly heartbeatKey: string;
  readonly releaseHeartbeat: ReturnType<RedisConnection['script']>;
  /** {@link HOLDS}: whether this agent still holds a pending vote. */
  readonly holds: ReturnType<RedisConnection['script']>;
  /** {@link READ_HASH}: a hash as a flat list. */
  readonly readHash: ReturnType<RedisConnection['script']>;
  readonly scripts: Scripts;
  phase: 'new' | 'opening' | 'open' | 'closing' | 'closed';
  counts: LedgerCounts;
  readonly known: ReturnType<typeof createKnownKeys>;
  readonly listeners: Set<(entries: LedgerEntry[]) => void>;
  readonly uncertain: Set<string>;
  queue: WriteQueue | undefined;
  nonce: string;
  heartbeatTimer: NodeJS.Timeout | undefined;
  sweepTimer: NodeJS.Timeout | undefined;
  sweeping: boolean;
  beatFailing: boolean;
  /**
   * After Redis comes back, every agent's heartbeat may have expired during the outage: claim
   * nothing until the others had one lease to beat again, or live agents' votes would be taken.
   */
  quietUntil: number;
  /** Listens for Redis coming back (made once). */
  readonly onRedisUp: () => void;
  warnings: string[];
  closing: Promise<void> | undefined;
}

export const forgetAt = (r: RedisVoteLedgerState, vote: Vote) => expiresAtMs(vote) + r.keepKeysForMs;

export function requireOpen(r: RedisVoteLedgerState, action: string): void {
  if (r.phase === 'open') return;
  const why = r.phase === 'new' || r.phase === 'opening' ? 'call open() first' : 'the ledger is closed';
  throw new StoreError(`cannot ${action} the vote ledger in ${r.description}: ${why}`, r.description);
}

export async function run(
  r: RedisVoteLedgerState,
  script: keyof Scripts,
  keys: readonly string[],
  args: readonly (string | number)[],
  doing: string,
): Promise<unknown> {
  try {
    return await r.scripts[script].run(keys, args);
  } catch (error) {
    throw redisFailure(doing, error);
  }
}

/** The record of vote `key`. */
export const recordKey = (r: RedisVoteLedgerState, key: string) => r.recordPrefix + key;

/** Whether this agent's completion of vote `key` waits in its write queue (not yet in Redis, or not confirmed). */
const queuedHere = (r: RedisVoteLedgerState, key: string) => r.queue?.finishing(key) === true;

/** Entries one claim script looks at (each declares two keys). */
const CLAIM_BATCH = 500;

/** `field, value, ...` of a hash (read by a script: a flat list whatever the protocol). */
async function readHash(r: RedisVoteLedgerState, key: string, doing: string): Promise<Array<[string, string]>> {
  let flat: unknown;
  try {
    flat = await r.readHash.run([key], []);
  } catch (error) {
    throw redisFailure(doing, error);
  }
  const list = Array.isArray(flat) ? flat.map(String) : [];
  const pairs: Array<[string, string]> = [];
  for (let i = 0; i + 1 < list.length; i += 2) pairs.push([list[i]!, list[i + 1]!]);
  return pairs;
}

/**
 * Claims orphans (and with `own`, re-reads this agent's pending votes); keeps the sizes. The
 * pending entries are read first; the script then takes each one still pending under the owner
 * seen, and claims it only if that owner's heartbeat is still gone.
 */
export async function claim(
  r: RedisVoteLedgerState,
  own: boolean,
  also: readonly string[] = [],
  adopted?: Set<string>,
): Promise<LedgerEntry[]> {
  const wanted = new Set(also);
  const pending = await readHash(r, r.keys[0]!, 'read the pending votes');
  // A vote whose completion is still queued here (Redis refusing writes: READONLY, NOREPLICAS, an
  // unconfirmed WAIT) ran its hooks here: pending in Redis only until that write lands, it is no
  // work left undone. Handed back, it would be rewarded again, after the first call, not during it.
  const candidates = pending.filter(
    ([key, owner]) => !queuedHere(r, key) && (owner === r.agentId ? own || wanted.has(key) : r.adoptOrphans),
  );
  // Given `adopted`: the keys another agent held when read (those the script returns it took over).
  if (adopted !== undefined) for (const [key, owner] of candidates) if (owner !== r.agentId) adopted.add(key);
  const rows: unknown[] = [];
  for (let first = 0; first === 0 || first < candidates.length; first += CLAIM_BATCH) {
    const batch = candidates.slice(first, first + CLAIM_BATCH);
    const keys = [...r.keys, ...batch.flatMap(([key, owner]) => [recordKey(r, key), r.agentPrefix + owner])];
    const args = [r.agentId, ...batch.flat()];
    let reply: [unknown[], unknown];
    try {
      reply = (await r.scripts.claim.run(keys, args)) as [unknown[], unknown];
    } catch (error) {
      throw redisFailure('read the pending votes', error);
    }
    r.counts = parseCounts(reply[1]);
    rows.push(...reply[0]);
  }
  // Again after the script: a job may have finished, and queued its completion, since the read.
  const entries = parseEntries(rows).filter((entry) => !queuedHere(r, entry.vote.key));
  for (const entry of entries) r.known.hold(entry.vote.key, forgetAt(r, entry.vote));
  return entries;
}
