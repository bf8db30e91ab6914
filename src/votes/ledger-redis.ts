import type { RedisConnection } from '../redis/connection.js';
import type { VoteLedger } from './types.js';

/** Options of {@link createRedisVoteLedger}. */
export interface RedisVoteLedgerOptions {
  connection: RedisConnection;
  /** This agent's ID: pending votes are filed under it, and taken over when its heartbeat expires. */
  agentId: string;
  /** The lease period (`state.redis.lease`): heartbeat TTL, and how often orphans are looked for. */
  leaseMs: number;
  /** How long after a vote's `expiresAt` its key is kept (`votes.keepKeysFor`). */
  keepKeysForMs: number;
  /** Epoch ms. Default `Date.now`. */
  now?: () => number;
}

/** The vote ledger in Redis: one dedupe point for every agent (a webhook seen by two agents runs once). */
export function createRedisVoteLedger(options: RedisVoteLedgerOptions): VoteLedger {
  void options;
  throw new Error('createRedisVoteLedger: not implemented yet');
}
