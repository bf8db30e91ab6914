import type { AgentLogger } from '../log/agent-logger.js';
import { redisFailure, type RedisConnection } from '../redis/connection.js';
import { StoreError } from '../store/errors.js';
import type { createKnownKeys } from './ledger-redis-known.js';
import type { WriteQueue } from './ledger-redis-queue.js';
import { parseCounts, parseEntries, type LedgerCounts } from './ledger-redis-scripts.js';
import { expiresAtMs } from './ledger-state.js';
import type { LedgerEntry, Vote } from './types.js';

/** The state of one Redis vote ledger (`ledger-redis.ts`), and the steps every operation shares. */

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
  readonly recordPrefix: string;
  readonly agentPrefix: string;
  readonly adoptOrphans: boolean;
  readonly heartbeatKey: string;
  readonly releaseHeartbeat: ReturnType<RedisConnection['script']>;
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
  args: readonly (string | number)[],
  doing: string,
): Promise<unknown> {
  try {
    return await r.scripts[script].run(r.keys, args);
  } catch (error) {
    throw redisFailure(doing, error);
  }
}

/** Claims orphans (and with `own`, re-reads this agent's pending votes); keeps the sizes. */
export async function claim(r: RedisVoteLedgerState, own: boolean, also: readonly string[] = []): Promise<LedgerEntry[]> {
  const args = [r.recordPrefix, r.agentId, r.adoptOrphans ? r.agentPrefix : '', own ? '1' : '0', ...also];
  const reply = (await run(r, 'claim', args, 'read the pending votes')) as [unknown[], unknown];
  r.counts = parseCounts(reply[1]);
  const entries = parseEntries(reply[0]);
  for (const entry of entries) r.known.hold(entry.vote.key, forgetAt(r, entry.vote));
  return entries;
}

