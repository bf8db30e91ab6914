import type { Capability } from '../runtime/capability.js';
import type { RedisConnection } from '../redis/connection.js';
import type { RedisShardsSourceOptions } from './sources/redis-shards.js';
import { sourceSpec, SourceConfigError, type SourceSpec } from './source-spec.js';
import type { PushSource } from './sources/push.js';
import type { PushSharer, PushShareState } from './sources/push-share.js';
import type { ListingAgentConfig } from '../config/schema.js';

/** The readiness component and log binding of {@link createPushShareCapability}. */
const PUSH_COMPONENT = 'push';

/** Options of {@link createPushShareCapability}. */
export interface PushShareCapabilityOptions {
  /** The agent's Redis connection (started by the agent). */
  connection: RedisConnection;
  /** Names this agent in the reports it writes (the agent ID). */
  process: string;
}

/**
 * What the leader's stats read with `stats.source: push` and `state.redis`: the reports every
 * agent's push endpoint wrote to Redis, expiring `stats.push.staleAfter` after their push, against
 * `stats.push.shardCount`, with reasons that speak of pushes.
 */
export function pushSumSpec(config: ListingAgentConfig, connection: RedisConnection): SourceSpec {
  return { kind: 'redis', options: pushSumOptions(config, connection), wording: 'push' };
}

function pushSumOptions(config: ListingAgentConfig, connection: RedisConnection): RedisShardsSourceOptions {
  const { push } = config.stats;
  return { connection, staleAfterMs: push.staleAfter, ...(push.shardCount !== undefined ? { shardCount: push.shardCount } : {}) };
}

function describeShare(url: string, state: PushShareState): string {
  if (state.problem === undefined) return `listening on ${url}; pushes shared through Redis`;
  const held = state.unshared === 1 ? '1 shard report' : `${state.unshared} shard reports`;
  return `listening on ${url}; Redis unreachable (${state.problem}): pushes answered 202, ${held} held here until it returns`;
}

/**
 * The `push` capability of an agent on Redis with `stats.source: push`: every agent, leader or
 * not, runs the push endpoint (`stats.push.*`: its key and `shardCount` checks are the push
 * source's), and writes each push to Redis as shard reports that keep the push's receive time and
 * expire `stats.push.staleAfter` after it (the newest push of a shard wins, whichever agent got
 * it); the leader's stats post their sum ({@link pushSumSpec}). It starts before the service
 * answers: the bot may push as soon as the agent runs. Its component is ready while it listens,
 * Redis or not: a push it cannot share is answered 202 and written when Redis returns.
 */
export function createPushShareCapability(options: PushShareCapabilityOptions): Capability {
  let source: PushSource | undefined;
  let sharer: PushSharer | undefined;
  let live = false;
  return {
    name: PUSH_COMPONENT,
    startsBeforeService: true,
    async start(context) {
      const { config, readiness, logger, now, mode } = context;
      const spec = sourceSpec(config, { logger, now, ...(mode ? { mode } : {}) });
      if (spec.kind !== 'push') throw new SourceConfigError(`the push endpoint runs with stats.source push, not ${spec.kind}`);
      // Loaded here, not at the agent's start: an agent loads only the source it is configured for.
      const [{ createSharedPushSource }, { createPushSharer }, { redisShardsSource }, { PUSH_WORDING }] = await Promise.all([
        import('./sources/push.js'),
        import('./sources/push-share.js'),
        import('./sources/redis-shards.js'),
        import('./sources/redis-shards-reports.js'),
      ]);
      const sum = redisShardsSource({ ...pushSumOptions(config, options.connection), now }, PUSH_WORDING);
      let url = '';
      live = true;
      const made = createPushSharer({
        connection: options.connection,
        staleAfterMs: config.stats.push.staleAfter,
        everyMs: config.stats.redis.reportEvery,
        process: options.process,
        logger,
        now,
        onState: (state) => {
          if (live && url !== '') readiness.set(PUSH_COMPONENT, true, describeShare(url, state));
        },
      });
      sharer = made;
      source = createSharedPushSource(spec.options, { share: (reports) => made.share(reports), read: (signal) => sum.read(signal) });
      await source.start();
      url = source.url();
      made.start();
      context.metrics.watchPushShare(() => (live ? made.state().unshared : 0));
      readiness.set(PUSH_COMPONENT, true, describeShare(url, made.state()));
    },
    async stop() {
      live = false;
      try {
        await source?.stop();
      } finally {
        source = undefined;
        await sharer?.stop();
        sharer = undefined;
      }
    },
  };
}
