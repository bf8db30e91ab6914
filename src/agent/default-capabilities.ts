import { ValidationError } from '../errors.js';
import type { ListingAgentConfig } from '../config/schema.js';
import { createCommandsCapability } from '../commands/capability.js';
import { commandsSourceFor } from '../commands/configured-source.js';
import { whileLeading } from '../leader/gate.js';
import type { AgentCluster } from './cluster.js';
import { createShardReporterCapability, createStatsCapability } from '../stats/capability.js';
import { createPushShareCapability, pushSumSpec } from '../stats/push-share-capability.js';
import { loadSourceFromSpec, sourceSpec, type SourceSpec } from '../stats/source-spec.js';
import type { CountReading, CountSource } from '../stats/source.js';
import { countSourceFor } from '../stats/sources/detect.js';
import { ownShardsSourceFor } from '../stats/sources/redis-shards-local.js';
import { createVotesCapability, type VotesCapability } from '../votes/capability.js';
import type { VotePipeline } from '../votes/pipeline.js';
import { configuredVoteHooks } from '../votes/configured.js';
import { createWebhooksCapability } from '../webhooks/capability.js';
import type { ListingAgentOptions } from './options.js';
import type { Capability } from '../runtime/capability.js';

/**
 * The capabilities `config` enables, with their sources. Throws `ValidationError` when one cannot
 * run. With a `cluster` (several agents on one Redis), stats and commands run on the leader only,
 * the votes poller too; the vote pipeline and the webhook receiver run on every agent, on the
 * Redis ledger; an embedded bot's shards are reported to Redis by every agent and summed by the
 * leader's poster, and so are the counts the bot pushes to any agent's push endpoint.
 */
export function defaultCapabilities(config: ListingAgentConfig, options: ListingAgentOptions, cluster: AgentCluster | undefined): Capability[] {
  const capabilities: Capability[] = [];
  const leaderOnly = (capability: Capability): Capability => (cluster ? whileLeading(capability, cluster.leadership) : capability);
  if (config.stats.enabled) {
    if (cluster && options.countSource === undefined && (config.stats.source === 'embedded' || config.stats.source === 'redis')) {
      if (config.stats.source === 'embedded') {
        capabilities.push(createShardReporterCapability({ source: ownShardsSourceFor(embeddedBot(options)), connection: cluster.connection, process: cluster.agentId }));
      }
      const summed = configuredSourceOnStart(sourceSpec({ ...config, stats: { ...config.stats, source: 'redis' } }, { redis: cluster.connection }));
      capabilities.push(leaderOnly(createStatsCapability(summed)));
    } else if (cluster && options.countSource === undefined && config.stats.source === 'push') {
      // Every agent takes pushes and shares them through Redis; the leader posts their sum.
      sourceSpec(config); // a missing key is refused now, not when the endpoint starts
      capabilities.push(createPushShareCapability({ connection: cluster.connection, process: cluster.agentId }));
      capabilities.push(leaderOnly(createStatsCapability(configuredSourceOnStart(pushSumSpec(config, cluster.connection)))));
    } else {
      capabilities.push(leaderOnly(createStatsCapability(statsSource(config, options))));
    }
  }
  if (config.commands.enabled) {
    capabilities.push(
      leaderOnly(
        createCommandsCapability(
          commandsSourceFor(config, {
            ...(options.commands !== undefined ? { commands: options.commands } : {}),
            ...(options.discord !== undefined ? { discord: options.discord } : {}),
          }),
        ),
      ),
    );
  }
  // A memory store keeps nothing across restarts: a journal on disk beside it would only surprise.
  const memory = options.store !== undefined && options.store.describe().startsWith('memory');
  const ledger = cluster ? 'redis' : memory ? 'memory' : 'file';
  const redis = cluster ? { connection: cluster.connection, agentId: cluster.agentId } : undefined;
  // Colliding hook names are a configuration error: refuse now, not at every reconnect.
  if ((config.votes.enabled || config.webhooks.enabled) && options.votes?.hooks === undefined) {
    configuredVoteHooks(config, { ...options.votes?.hookOptions, ...(redis ? { redis: redis.connection } : {}) });
  }
  if (config.votes.enabled || config.webhooks.enabled) {
    // One vote pipeline per agent, in the votes capability (started before the receiver, which
    // feeds it): with votes.enabled off it runs the pipeline alone, without polling the cursor.
    const votes: VotesCapability = createVotesCapability({
      ledger,
      ...(redis ? { redis, leadership: cluster!.leadership } : {}),
      ...options.votes,
      ...(config.votes.enabled ? {} : { poll: false }),
    });
    capabilities.push(votes);
    if (config.webhooks.enabled) capabilities.push(webhooksCapability(options, cluster, () => votes.pipeline));
  }
  return capabilities;
}

/** The webhook receiver, feeding `pipeline`; with a cluster, its secrets are shared through Redis. */
function webhooksCapability(options: ListingAgentOptions, cluster: AgentCluster | undefined, pipeline: () => VotePipeline | undefined): Capability {
  return createWebhooksCapability({
    sharedPipeline: pipeline,
    // Rotated and integration secrets are shared with the other agents through Redis.
    ...(cluster ? { secretsRedis: cluster.connection } : {}),
    ...options.webhooks,
  });
}

/** The bot object of embedded mode, or a `ValidationError` saying to pass it. */
function embeddedBot(options: ListingAgentOptions): unknown {
  if (options.discord === undefined) {
    throw new ValidationError('config', 'the configuration', [
      {
        path: 'stats.source',
        message:
          'is embedded, but no bot was given: pass your discord.js Client, ShardingManager or ClusterManager, or your Eris or Oceanic.js Client, as `discord` to createListingAgent, or set stats.source to discord-rest or push (the daemon has no bot of its own)',
      },
    ]);
  }
  return options.discord;
}

function statsSource(config: ListingAgentConfig, options: ListingAgentOptions): CountSource {
  if (options.countSource) return options.countSource;
  if (config.stats.source !== 'embedded') {
    return configuredSourceOnStart(sourceSpec(config, options.logger ? { logger: options.logger.child({ source: config.stats.source }) } : {}));
  }
  return countSourceFor(embeddedBot(options));
}

/**
 * The source of `spec`. `sourceSpec` checked its options already (a missing key or token throws
 * `SourceConfigError`, as `createConfiguredSource` would); its module (the push endpoint's
 * server, the discord-rest or Redis reader) is loaded and the source made only when the stats
 * capability starts it: an agent loads only the source it is configured for, and none without
 * stats (issue 20, idle footprint). Until then it reads as not ready; `onChange` listeners given
 * before are handed to the real source.
 */
function configuredSourceOnStart(spec: SourceSpec): CountSource {
  let inner: CountSource | undefined;
  let loading: Promise<CountSource> | undefined;
  const subscriptions = new Set<{ listener: () => void; off: () => void }>();
  // Made once and kept: a stats capability started again (a leader that leads again) starts the
  // same source anew. A failed load is not kept, so the next start tries again.
  const load = () =>
    (loading ??= loadSourceFromSpec(spec).then(
      (made) => {
        for (const subscription of subscriptions) subscription.off = made.onChange?.(subscription.listener) ?? (() => undefined);
        inner = made;
        return made;
      },
      (error: unknown) => {
        loading = undefined;
        throw error;
      },
    ));
  return {
    get description() {
      return inner?.description ?? `the ${spec.kind} source`;
    },
    read(signal?: AbortSignal): Promise<CountReading> {
      if (inner === undefined) return Promise.resolve({ ready: false, reason: `the ${spec.kind} source has not started` });
      return inner.read(signal);
    },
    async start() {
      await (await load()).start?.();
    },
    async stop() {
      await inner?.stop?.();
    },
    onChange(listener) {
      const subscription = { listener, off: inner?.onChange?.(listener) ?? (() => undefined) };
      subscriptions.add(subscription);
      return () => {
        subscription.off();
        subscriptions.delete(subscription);
      };
    },
  };
}
