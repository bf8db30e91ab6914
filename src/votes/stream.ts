import type { AgentLogger } from '../agent/logger.js';
import type { RedisConnection } from '../redis/connection.js';
import type { Vote, VoteHook } from './types.js';

/** The name of the hook that appends votes to the reward stream. */
export const STREAM_HOOK_NAME = 'redis-stream';

/** Options of {@link createStreamHook}. */
export interface StreamHookOptions {
  connection: RedisConnection;
  /** The stream key under the prefix (`votes.stream.key`). */
  key: string;
  /** Entries kept at most (`votes.stream.maxLength`). */
  maxLength: number;
  /** How long the "already appended" marker of a vote is kept. */
  markerTtlMs: number;
  /** Retries after a failure (the pipeline's). Default 5. */
  retries?: number;
}

/** A vote hook that appends each vote to the Redis Stream once (a retry never appends twice). */
export function createStreamHook(options: StreamHookOptions): VoteHook {
  void options;
  throw new Error('createStreamHook: not implemented yet');
}

/** What a stream consumer's handler gets besides the vote. */
export interface StreamVoteContext {
  /** The vote key: make the reward idempotent on it. */
  idempotencyKey: string;
  /** The stream entry's ID. */
  entryId: string;
  /** How many times the entry was delivered (2 or more: claimed from a consumer that died). */
  deliveries: number;
}

/** Options of {@link createVoteConsumer}. */
export interface VoteConsumerOptions {
  /** A Redis URL (its own connection: blocking reads need one), or a connection to duplicate. */
  url: string;
  /** `state.redis.prefix`. Default `listing-agent:`. */
  prefix?: string;
  /** `votes.stream.key`. Default `votes:stream`. */
  key?: string;
  /** The consumer group: every bot process of one bot uses the same. Default `rewards`. */
  group?: string;
  /** This process's name in the group, unique per process. Default `<hostname>/<pid>`. */
  consumer?: string;
  /** Gives the reward; resolve to acknowledge (XACK), reject to have it delivered again. */
  handler: (vote: Vote, context: StreamVoteContext) => Promise<void>;
  /** An entry left unacknowledged this long by its consumer is claimed (XAUTOCLAIM). Default 30 000 ms. */
  claimIdleMs?: number;
  /** How long one XREADGROUP blocks. Default 5 000 ms. */
  blockMs?: number;
  /** Handler calls at once. Default 8. */
  concurrency?: number;
  logger?: AgentLogger;
}

/** A running consumer: `stop()` finishes the handlers in flight and disconnects. */
export interface VoteConsumer {
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** Consumes the reward stream through a consumer group: each vote goes to exactly one live process. */
export function createVoteConsumer(options: VoteConsumerOptions): VoteConsumer {
  void options;
  throw new Error('createVoteConsumer: not implemented yet');
}

/** Re-exported for consumers' type checks. */
export type { RedisConnection };
