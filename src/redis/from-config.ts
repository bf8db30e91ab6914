import { settingName, type AgentMode } from '../config/setting-names.js';
import { ListingAgentError, errorMessage } from '../errors.js';
import { openRedisConnection, RedisUnavailableError } from './connection.js';
import type { RedisConnection, RedisConnectionOptions, RedisSettingWords } from './connection.js';
import { describeRedisUrl } from './keys.js';

/**
 * The one way a `state.redis` section becomes a connection, for the agent, the CLI and the
 * doctor: the same URL, Sentinels or cluster nodes, prefix and TLS, the same client name rule, the same one-line
 * errors, naming the config's keys (with their variables for the daemon).
 */

/** What a connection takes from `state.redis`. */
export interface RedisSection {
  url?: string | undefined;
  sentinel?: RedisConnectionOptions['sentinel'];
  cluster?: RedisConnectionOptions['cluster'];
  username?: string | undefined;
  password?: string | undefined;
  prefix?: string | undefined;
  tls?: RedisConnectionOptions['tls'];
  replicas?: number | undefined;
  /** `state.redis.confirmTimeout`, in ms. */
  confirmTimeout?: number | undefined;
}

/**
 * The name an agent shows in `CLIENT LIST`: `listing-agent-<agent id>`, every character Redis refuses in a name (spaces, controls,
 * non-ASCII) as `-`.
 */
export function agentClientName(agentId: string): string {
  return `listing-agent ${agentId}`.replace(/[^\x21-\x7e]/g, '-');
}

/** How a connection of `state.redis` names its settings: the keys alone embedded, with their variables for the daemon. */
function redisSettingWords(mode: AgentMode | undefined): RedisSettingWords {
  return {
    url: settingName('state.redis.url', mode),
    masterName: settingName('state.redis.sentinel.masterName', mode),
    nodes: settingName('state.redis.sentinel.nodes', mode),
    clusterNodes: settingName('state.redis.cluster.nodes', mode),
  };
}

/**
 * The connection `redis` describes, not started. A value the Redis client refuses (a bad URL)
 * becomes one `RedisUnavailableError` naming `state.redis.url` without its password.
 * @param options Everything but what the section gives (default: the connection's defaults).
 * @param mode Whose words the messages use: the daemon's (the default) or an embedded agent's.
 */
export function redisConnectionFor(
  redis: RedisSection,
  options: Omit<RedisConnectionOptions, keyof RedisSection> = {},
  mode?: AgentMode,
): RedisConnection {
  const section = {
    url: redis.url,
    sentinel: redis.sentinel,
    cluster: redis.cluster,
    username: redis.username,
    password: redis.password,
    prefix: redis.prefix,
    tls: redis.tls,
    replicas: redis.replicas,
    confirmTimeoutMs: redis.confirmTimeout,
  };
  try {
    return openRedisConnection({ ...section, ...options }, redisSettingWords(mode));
  } catch (error) {
    if (error instanceof ListingAgentError) throw error;
    const url = redis.url ?? '';
    // The client's own message may quote the URL: never let its password out.
    const detail = url === '' ? errorMessage(error) : errorMessage(error).split(url).join(describeRedisUrl(url));
    const other = redis.cluster === undefined ? 'state.redis.sentinel' : 'state.redis.cluster';
    const setting = redis.url === undefined ? other : `state.redis.url (${describeRedisUrl(url)})`;
    throw new RedisUnavailableError(`${setting} cannot be used: ${detail}`, { cause: error });
  }
}
