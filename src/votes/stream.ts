import { redisFailure, type RedisConnection } from '../redis/connection.js';
import { REDIS_KEYS } from '../redis/keys.js';
import { HOOK_DEFAULTS } from './hooks/errors.js';
import { markerTtl, voteToFields } from './stream-entries.js';
import type { HookCallContext, Vote, VoteHook } from './types.js';

/*
 * The reward stream, producer side: a vote hook that appends each vote to a Redis Stream, for bot
 * processes to consume through a consumer group (stream-consumer.ts). The pipeline may run a hook
 * twice for one vote (a crash between the hook's success and its record), so the append is
 * guarded by a marker: one Lua script sets `streamed:<vote key>` and appends, both or neither.
 */

/** The name of the hook that appends votes to the reward stream. */
export const STREAM_HOOK_NAME = 'redis-stream';

/**
 * Appends the vote unless its marker exists; the marker holds the entry's ID. The stream's type is
 * checked before anything is written: a Lua script that fails half way keeps what it wrote, and
 * a marker without its entry would lose the vote.
 * KEYS: marker, stream. ARGV: marker TTL ms, MAXLEN, field/value pairs. Returns {appended (1|0), entry ID}.
 */
const APPEND_SCRIPT = `
local existing = redis.call('GET', KEYS[1])
if existing then return {0, existing} end
local kind = redis.call('TYPE', KEYS[2])['ok']
if kind ~= 'stream' and kind ~= 'none' then
  return redis.error_reply('WRONGTYPE ' .. KEYS[2] .. ' holds a ' .. kind .. ', not a stream')
end
local id = redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[2], '*', unpack(ARGV, 3))
redis.call('SET', KEYS[1], id, 'PX', ARGV[1])
return {1, id}
`;

/** Options of {@link createStreamHook}. */
export interface StreamHookOptions {
  connection: RedisConnection;
  /** The stream key under the prefix (`votes.stream.key`). */
  key: string;
  /** Entries kept at most (`votes.stream.maxLength`): XADD MAXLEN ~ trims the oldest. */
  maxLength: number;
  /**
   * How long a vote's "already appended" marker is kept after the vote expires (at least one
   * minute in all): the ledger's `votes.keepKeysFor`, the window in which a vote can come again.
   */
  markerTtlMs: number;
  /** Retries after a failure (Redis down). Default 5 (the other hooks'). */
  retries?: number;
  /** Epoch ms. Default `Date.now`. */
  now?: () => number;
}

/** What {@link appendVote} did. */
export interface StreamAppend {
  /** False when the vote's marker was there: it was appended before. */
  appended: boolean;
  /** The stream entry's ID (the earlier one when not appended now). */
  entryId: string;
}

/** A {@link VoteHook} that also says what it appended (tests, the CLI). */
export interface StreamHook extends VoteHook {
  appendVote(vote: Vote): Promise<StreamAppend>;
}

/**
 * A vote hook (`redis-stream`) that appends each vote to the Redis Stream `key` exactly once,
 * however often it runs for the vote (retries, a replay after a crash), as long as the vote's
 * marker lives ({@link StreamHookOptions.markerTtlMs}). It fails (and the pipeline retries) while
 * Redis is down. Consumers read the stream with `createVoteConsumer`.
 */
export function createStreamHook(options: StreamHookOptions): StreamHook {
  const { connection, maxLength } = options;
  const now = options.now ?? Date.now;
  const script = connection.script(APPEND_SCRIPT);
  const streamKey = connection.key(options.key);

  const appendVote = async (vote: Vote): Promise<StreamAppend> => {
    let reply: unknown;
    try {
      reply = await script.run(
        [connection.key(REDIS_KEYS.streamed(vote.key)), streamKey],
        [markerTtl(vote, options.markerTtlMs, now()), maxLength, ...voteToFields(vote)],
      );
    } catch (error) {
      throw redisFailure(`append vote ${vote.key} to the reward stream ${streamKey}`, error);
    }
    const [appended, entryId] = Array.isArray(reply) ? reply : [];
    return { appended: appended === 1, entryId: String(entryId) };
  };

  return {
    name: STREAM_HOOK_NAME,
    retries: options.retries ?? HOOK_DEFAULTS.retries,
    appendVote,
    async run(vote: Vote, context?: HookCallContext) {
      context?.signal.throwIfAborted();
      await appendVote(vote);
    },
  };
}

export {
  createVoteConsumer,
  VOTE_CONSUMER_DEFAULTS,
  type StreamVoteContext,
  type VoteConsumer,
  type VoteConsumerOptions,
} from './stream-consumer.js';

/** Re-exported for consumers' type checks. */
