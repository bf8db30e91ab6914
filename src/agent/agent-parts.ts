import type { ListingClient } from '../api/client.js';
import type { ListingAgentConfig } from '../config/schema.js';
import { settingName } from '../config/setting-names.js';
import type { AgentLogger } from '../log/agent-logger.js';
import type { StateStore } from '../store/types.js';
import type { AgentCluster } from './cluster.js';
import { botProcessOf } from '../discord/shapes.js';
import { fileStore, redisCluster } from './lazy.js';
import { createAgentClient } from './service-client.js';
import type { ListingAgentOptions } from './options.js';

/**
 * What an agent is made of besides its capabilities: the state store (the `store` option, else the
 * file store, else with `state.redis` the Redis store of the agents' cluster, with its leader
 * lease) and the service client (the `client` option, else one made from `config.service`). Each
 * module is loaded only when used (agent/lazy.ts): a bot that passes its own store loads no file
 * store, an agent without `state.redis` no Redis.
 */
export function agentParts(
  config: ListingAgentConfig,
  options: ListingAgentOptions,
  logger: AgentLogger,
): { store: StateStore; cluster: AgentCluster | undefined; client: ListingClient } {
  let store: StateStore;
  let cluster: AgentCluster | undefined;
  const redis = config.state.redis;
  if (redis !== undefined && options.store === undefined) {
    const { createAgentCluster, defaultAgentId } = redisCluster.get();
    const agentId = options.agentId ?? redis.agentId ?? defaultAgentId();
    ({ store, ...cluster } = createAgentCluster(redis, agentId, logger, options.mode ?? 'embedded'));
  } else {
    // Its messages name the setting as the agent's user sets it (state.directory, embedded). In a
    // shard's process, the lock says which: a sibling shard's agent then says to make one agent, in the manager's process.
    const setting = settingName('state.directory', options.mode ?? 'embedded');
    const botProcess = botProcessOf(options.discord);
    store =
      options.store ??
      fileStore.get().createFileStore({ directory: config.state.directory, setting, ...(botProcess ? { botProcess } : {}) });
  }
  const client =
    options.client ??
    createAgentClient({
      projectToken: config.service.token,
      v1BaseUrl: config.service.v1,
      v0BaseUrl: config.service.v0,
      ...options.transport,
    });
  return { store, cluster, client };
}
