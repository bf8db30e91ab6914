import type { ListingAgentConfig } from '../config/schema.js';
import { whileLeading } from '../leader/gate.js';
import type { AgentCluster } from './cluster.js';
import { createStatsCapability } from '../stats/capability.js';
import { createPushShareCapability, pushSumSpec } from '../stats/push-share-capability.js';
import { createShardReporterCapability } from '../stats/shard-reporter-capability.js';
import { sourceSpec } from '../stats/source-spec.js';
import { ownShardsSourceFor } from '../stats/sources/redis-shards-local.js';
import type { ListingAgentOptions } from './options.js';
import type { Capability } from '../runtime/capability.js';
import { configuredSourceOnStart, embeddedBot } from './stats-capabilities.js';

/**
 * The stats capabilities of an agent on `state.redis` whose counts are shared through Redis
 * (loaded only then, agent/lazy.ts): an embedded bot's shards are reported to Redis by every agent
 * and summed by the leader's poster (sources `embedded` and `redis`), and so are the counts the bot
 * pushes to any agent's push endpoint (source `push`).
 */
export function sharedStatsCapabilities(config: ListingAgentConfig, options: ListingAgentOptions, cluster: AgentCluster): Capability[] {
  const leaderOnly = (capability: Capability): Capability => whileLeading(capability, cluster.leadership);
  const mode = options.mode ?? 'embedded';
  if (config.stats.source === 'embedded' || config.stats.source === 'redis') {
    const capabilities: Capability[] = [];
    if (config.stats.source === 'embedded') {
      capabilities.push(
        createShardReporterCapability({
          source: ownShardsSourceFor(embeddedBot(options)),
          connection: cluster.connection,
          process: cluster.agentId,
        }),
      );
    }
    const summed = configuredSourceOnStart(
      sourceSpec({ ...config, stats: { ...config.stats, source: 'redis' } }, { redis: cluster.connection, mode }),
    );
    capabilities.push(leaderOnly(createStatsCapability(summed)));
    return capabilities;
  }
  if (config.stats.source === 'push') {
    // Every agent takes pushes and shares them through Redis; the leader posts their sum.
    sourceSpec(config, { mode }); // a missing key is refused now, not when the endpoint starts
    return [
      createPushShareCapability({ connection: cluster.connection, process: cluster.agentId }),
      leaderOnly(createStatsCapability(configuredSourceOnStart(pushSumSpec(config, cluster.connection)))),
    ];
  }
  throw new TypeError(`stats.source ${config.stats.source} shares no counts through Redis`);
}

