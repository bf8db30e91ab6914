import type { AgentLogger } from '../log/agent-logger.js';
import { COMMANDS_STATE_KEY } from '../commands/sync.js';
import type { ListingAgentConfig } from '../config/schema.js';
import type { AgentMode } from '../config/setting-names.js';
import type { RedisConnection } from '../redis/connection.js';
import { agentClientName, redisConnectionFor } from '../redis/from-config.js';
import { BUFFER_KEY } from '../stats/buffer-store.js';
import { createRedisStore } from '../store/redis.js';
import type { StateStore } from '../store/types.js';
import { CURSOR_KEY_PREFIX } from '../votes/cursor-state.js';
import { createRedisLeadership, type RedisLeadership } from '../leader/redis-lease.js';

// Loaded with this module, only by an agent on `state.redis` (agent/lazy.ts).
export { defaultAgentId } from '../redis/connection.js';

/**
 * The state keys only the leader writes, fenced by its lease token in the Redis store: the votes
 * cursors (`votes:cursor:<project>`), the command hash (`commands:lastSync`) and the stats buffer
 * (`stats:buffer`).
 */
function isLeaderOnlyKey(key: string): boolean {
  return key.startsWith(CURSOR_KEY_PREFIX) || key === COMMANDS_STATE_KEY || key === BUFFER_KEY;
}

/** What an agent on `state.redis` shares its work through. */
export interface AgentCluster {
  connection: RedisConnection;
  leadership: RedisLeadership;
  agentId: string;
}

/**
 * The Redis side of an agent on `state.redis`: one connection, the leader lease on it, and the
 * state store whose leader-only keys are fenced by the lease's token. Nothing connects until the
 * agent starts the connection.
 */
export function createAgentCluster(
  redis: NonNullable<ListingAgentConfig['state']['redis']>,
  agentId: string,
  logger: AgentLogger,
  mode: AgentMode,
): AgentCluster & { store: StateStore } {
  const options = { clientName: agentClientName(agentId), logger: logger.child({ component: 'redis' }) };
  const connection = redisConnectionFor(redis, options, mode);
  const leadership = createRedisLeadership({ connection, agentId, leaseMs: redis.lease, logger: logger.child({ component: 'leader' }) });
  const store = createRedisStore({ connection, fence: { token: () => leadership.fencingToken, applies: isLeaderOnlyKey } });
  return { connection, leadership, agentId, store };
}
