import type { AgentCluster } from './cluster.js';
import type { VotePipeline } from '../votes/pipeline.js';
import { createWebhooksCapability } from '../webhooks/capability.js';
import type { ListingAgentOptions } from './options.js';
import type { Capability } from '../runtime/capability.js';

/**
 * The webhook receiver (`webhooks.enabled`; loaded only then, agent/lazy.ts), feeding `pipeline`;
 * with a cluster, its rotated and integration secrets are shared with the other agents through Redis.
 */
export function webhooksCapability(
  options: ListingAgentOptions,
  cluster: AgentCluster | undefined,
  pipeline: () => VotePipeline | undefined,
): Capability {
  return createWebhooksCapability({
    sharedPipeline: pipeline,
    ...(cluster ? { secretsRedis: cluster.connection } : {}),
    ...options.webhooks,
  });
}
