import type { ListingAgentConfig } from '../config/schema.js';
import type { AgentCluster } from './cluster.js';
import { createVotesCapability, type VotesCapability } from '../votes/capability.js';
import { configuredVoteHooks } from '../votes/configured.js';
import { environmentVariableName } from '../config/fields.js';
import type { ListingAgentOptions } from './options.js';

/**
 * The votes capability (`votes.enabled` or `webhooks.enabled`; loaded only then, agent/lazy.ts):
 * one vote pipeline per agent, started before the webhook receiver that feeds it; with
 * `votes.enabled` off it runs the pipeline alone, without polling the cursor. On every agent of a
 * `cluster`, on the Redis ledger (its poller polls on the leader only). Throws `ValidationError`
 * for colliding hook names.
 */
export function votesCapability(config: ListingAgentConfig, options: ListingAgentOptions, cluster: AgentCluster | undefined): VotesCapability {
  // A memory store keeps nothing across restarts: a journal on disk beside it would only surprise.
  const memory = options.store !== undefined && options.store.describe().startsWith('memory');
  const ledger = cluster ? 'redis' : memory ? 'memory' : 'file';
  const redis = cluster ? { connection: cluster.connection, agentId: cluster.agentId } : undefined;
  // Colliding hook names are a configuration error: refuse now, not at every reconnect.
  if (options.votes?.hooks === undefined) {
    configuredVoteHooks(config, { ...options.votes?.hookOptions, ...(redis ? { redis: redis.connection } : {}) });
  }
  return createVotesCapability({
    ledger,
    // The daemon's owner may set a setting in the file or with its variable: its lines name both.
    ...(options.mode === 'daemon' ? { settingName: (path: string) => `${path} (${environmentVariableName(path.split('.'))})` } : {}),
    ...(redis ? { redis, leadership: cluster!.leadership } : {}),
    ...options.votes,
    ...(config.votes.enabled ? {} : { poll: false }),
  });
}
