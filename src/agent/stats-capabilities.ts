import type { ListingAgentConfig } from '../config/schema.js';
import { createStatsCapability } from '../stats/capability.js';
import { loadSourceFromSpec, sourceSpec, type SourceSpec } from '../stats/source-spec.js';
import type { CountReading, CountSource } from '../stats/source.js';
import type { ListingAgentOptions } from './options.js';
import type { Capability } from '../runtime/capability.js';

/*
 * The stats capabilities `config.stats` asks for, with their count source: loaded only by an agent
 * with `stats.enabled` (agent/lazy.ts). The source's own module (the push endpoint, the Discord
 * REST reader, the Redis sum) is loaded when the capability starts.
 */

/**
 * The stats capability: the poster and its source (counts shared through Redis are the other
 * module's: stats-cluster-capabilities.ts). Throws `ValidationError` when the source cannot run.
 */
export function statsCapability(
  config: ListingAgentConfig,
  options: ListingAgentOptions,
  botSource: (bot: unknown) => CountSource,
): Capability {
  return createStatsCapability(statsSource(config, options, botSource));
}

/** The bot object of embedded mode (the agent refused to be made without one: start-problems.ts). */
export function embeddedBot(options: ListingAgentOptions): unknown {
  if (options.discord === undefined)
    throw new TypeError('stats.source is embedded, but no bot was given as `discord` (startProblems says so first)');
  return options.discord;
}

/** The counts: `countSource`, else the configured source, else the bot's (`botSource`, told by the bot's shape). */
function statsSource(config: ListingAgentConfig, options: ListingAgentOptions, botSource: (bot: unknown) => CountSource): CountSource {
  if (options.countSource) return options.countSource;
  if (config.stats.source !== 'embedded') {
    const mode = options.mode ?? 'embedded';
    const logger = options.logger ? { logger: options.logger.child({ source: config.stats.source }) } : {};
    return configuredSourceOnStart(sourceSpec(config, { mode, ...logger }));
  }
  return botSource(embeddedBot(options));
}

/**
 * The source of `spec`. `sourceSpec` checked its options already (a missing key or token throws
 * `SourceConfigError`, as `createConfiguredSource` would); its module (the push endpoint's
 * server, the discord-rest or Redis reader) is loaded and the source made only when the stats
 * capability starts it: an agent loads only the source it is configured for, and none without
 * stats (issue 20, idle footprint). Until then it reads as not ready; `onChange` listeners given
 * before are handed to the real source.
 */
export function configuredSourceOnStart(spec: SourceSpec): CountSource {
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
