import { ListingAgentError, errorMessage } from '../errors.js';
import { createRedisConnection, RedisUnavailableError, type RedisConnection, type RedisConnectionOptions } from './connection.js';
import { describeRedisUrl } from './keys.js';

/**
 * The one way a `state.redis` section becomes a connection, for the agent, the CLI and the
 * doctor: the same URL, prefix and TLS, the same client name rule, the same one-line error.
 */

/** What a connection takes from `state.redis`. */
export interface RedisSection {
  url: string;
  prefix?: string | undefined;
  tls?: RedisConnectionOptions['tls'];
}

/**
 * The name an agent shows in `CLIENT LIST`: `listing-agent-<agent id>`, every character Redis refuses in a name (spaces, controls,
 * non-ASCII) as `-`.
 */
export function agentClientName(agentId: string): string {
  return `listing-agent ${agentId}`.replace(/[^\x21-\x7e]/g, '-');
}

/**
 * The connection `redis` describes, not started. A value the Redis client refuses (a bad URL)
 * becomes one `RedisUnavailableError` naming `state.redis.url` without its password.
 * @param options Everything but the URL, prefix and TLS (default: the connection's defaults).
 */
export function redisConnectionFor(
  redis: RedisSection,
  options: Omit<RedisConnectionOptions, 'url' | 'prefix' | 'tls'> = {},
): RedisConnection {
  try {
    return createRedisConnection({ url: redis.url, prefix: redis.prefix, tls: redis.tls, ...options });
  } catch (error) {
    if (error instanceof ListingAgentError) throw error;
    // The client's own message may quote the URL: never let its password out.
    const detail = errorMessage(error).split(redis.url).join(describeRedisUrl(redis.url));
    throw new RedisUnavailableError(`state.redis.url (${describeRedisUrl(redis.url)}) cannot be used: ${detail}`, { cause: error });
  }
}
