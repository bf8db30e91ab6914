import type { ListingAgentConfig } from '../config/schema.js';
import type { AgentCluster } from './cluster.js';
import {
  botCountSources,
  commandsCapabilities,
  leaderGate,
  statsCapabilities,
  statsClusterCapabilities,
  votesCapabilities,
  webhooksCapabilities,
} from './lazy.js';
import type { ListingAgentOptions } from './options.js';
import type { Capability } from '../runtime/capability.js';

/**
 * The capabilities `config` enables, with their sources, each one's modules loaded only when it is
 * enabled (agent/lazy.ts). Throws `ValidationError` when one cannot run. With a `cluster` (several
 * agents on one Redis), stats and commands run on the leader only, the votes poller too; the vote
 * pipeline and the webhook receiver run on every agent, on the Redis ledger; an embedded bot's
 * shards are reported to Redis by every agent and summed by the leader's poster, and so are the
 * counts the bot pushes to any agent's push endpoint.
 */
export function defaultCapabilities(
  config: ListingAgentConfig,
  options: ListingAgentOptions,
  cluster: AgentCluster | undefined,
): Capability[] {
  const capabilities: Capability[] = [];
  const leaderOnly = (capability: Capability): Capability =>
    cluster ? leaderGate.get().whileLeading(capability, cluster.leadership) : capability;
  if (config.stats.enabled) {
    // On Redis, counts from the bot (embedded, pushed) or from Redis are shared: the leader posts their sum.
    const shared =
      cluster !== undefined && options.countSource === undefined && ['embedded', 'redis', 'push'].includes(config.stats.source);
    if (shared) capabilities.push(...statsClusterCapabilities.get().sharedStatsCapabilities(config, options, cluster));
    else
      capabilities.push(
        leaderOnly(statsCapabilities.get().statsCapability(config, options, (bot) => botCountSources.get().countSourceFor(bot))),
      );
  }
  if (config.commands.enabled) capabilities.push(leaderOnly(commandsCapabilities.get().commandsCapability(config, options)));
  if (config.votes.enabled || config.webhooks.enabled) {
    const votes = votesCapabilities.get().votesCapability(config, options, cluster);
    capabilities.push(votes);
    if (config.webhooks.enabled) capabilities.push(webhooksCapabilities.get().webhooksCapability(options, cluster, () => votes.pipeline));
  }
  return capabilities;
}
