import { join } from 'node:path';
import type { ListingAgentConfig } from '../../config/schema.js';
import { stateDirectory } from '../../config/state-directory.js';
import type { CapabilityContext } from '../../runtime/capability.js';
import type { Leadership } from '../../runtime/leadership.js';
import type { RedisConnection } from '../../redis/connection.js';
import { HOOK_DEFAULTS } from '../hooks/errors.js';
import { hooksFromConfig, type HooksFromConfigOptions } from '../hooks/index.js';
import { createInProcessHook } from '../hooks/in-process.js';
import { createFileVoteLedger } from '../ledger-file.js';
import { createMemoryVoteLedger } from '../ledger-memory.js';
import { createVotePipeline, type VotePipeline } from '../pipeline.js';
import { createStreamHook } from '../stream.js';
import type { Vote, VoteHook, VoteLedger, VotesEvents } from '../types.js';
import { ListingAgentError } from '../../errors.js';
import { REDIS_KEYS } from '../../redis/keys.js';
import { createRedisVoteLedger } from '../ledger-redis.js';
import { createLocalReminderStore } from './local-store.js';
import { createRedisReminderStore } from './redis-store.js';
import { createReminders, type Reminders, type ReminderStore } from './reminders.js';

/*
 * The reminders as the config describes them, wired from the vote pipeline's own parts: a second
 * pipeline instance (its own ledger, `<state.directory>/reminders/votes.journal`, its own hooks)
 * gives each reminder the rewards' retries, dead letters and crash recovery; the schedule is kept
 * in `<state.directory>/reminders.journal` or in memory (`local-store.ts`), or in Redis
 * (`redis-store.ts`), under one timer (`reminders.ts`). The votes capability schedules each batch
 * of votes after recording it (`ingest.ts`), whatever its ledger.
 */

/** The in-process reminder hook's name (the `reminder` event). */
const REMINDER_EVENT_HOOK = 'reminder-event';
/** The reminder stream hook's name. */
const REMINDER_STREAM_HOOK = 'reminder-stream';
/** The names `votes.reminders.hooks` may not take. */
export const RESERVED_REMINDER_HOOK_NAMES: readonly string[] = [REMINDER_EVENT_HOOK, REMINDER_STREAM_HOOK];

/**
 * The reminder hooks of `config`: the `reminder` event's listeners (when `listeners` is given: the
 * in-process hook, which fails while none is attached), `votes.reminders.hooks`, then the stream.
 */
function configuredReminderHooks(
  config: ListingAgentConfig,
  options: HooksFromConfigOptions & { listeners?: () => readonly ((vote: Vote) => unknown)[]; redis?: RedisConnection } = {},
): VoteHook[] {
  const { listeners, redis, ...hookOptions } = options;
  const settings = config.votes.reminders;
  const names = { reservedNames: RESERVED_REMINDER_HOOK_NAMES, configPath: 'votes.reminders.hooks', kind: 'reminder' as const };
  const hooks = hooksFromConfig(settings.hooks, { ...hookOptions, ...names });
  const stream = config.votes.stream;
  if (stream.enabled && redis !== undefined) {
    const markerTtlMs = config.votes.keepKeysFor + settings.delay + settings.maxLateness;
    const hook = createStreamHook({ connection: redis, key: `${stream.key}:reminders`, maxLength: stream.maxLength, markerTtlMs });
    hooks.push({ name: REMINDER_STREAM_HOOK, retries: hook.retries, run: (vote, context) => hook.run(vote, context) });
  }
  if (listeners === undefined) return hooks;
  return [createInProcessHook({ name: REMINDER_EVENT_HOOK, event: 'reminder', listeners, retries: HOOK_DEFAULTS.retries }), ...hooks];
}

/** Why the reminders do not start with no hook at all: a reminder nobody receives is never `sent`. */
const NO_REMINDER_HOOK =
  'nothing receives the reminders: add a hook to votes.reminders.hooks, set votes.stream.enabled, ' +
  "or attach a listener with agent.on('reminder', ...) before the agent starts";

/** The running reminders of a votes capability. */
export interface RunningReminders {
  reminders: Reminders;
  pipeline: VotePipeline;
  ledger: VoteLedger;
  stop(deadline: number): Promise<void>;
}

/** Options of {@link startReminders}. */
export interface StartRemindersOptions {
  /**
   * `file`: this agent's (`<directory>/reminders.journal`, the reminder pipeline's ledger in
   * `<directory>/reminders/`); `memory`; `redis`: the schedule and ledger shared by every agent
   * (needs `redis`, `agentId`).
   */
  kind: 'file' | 'memory' | 'redis';
  /** This agent's ID (`redis`). */
  agentId?: string;
  /** The longest timer step: with `redis`, how often the leader looks at the shared schedule. Default 60 000 ms (`redis`: 5 000). */
  lookMs?: number;
  hookOptions?: HooksFromConfigOptions;
  redis?: RedisConnection;
  leadership?: Leadership;
  /** Directory override (tests). Default: the config's state directory. */
  directory?: string;
  /**
   * The schedule's store, opened already ({@link reminderStoreFor}): the votes capability opens it
   * before its vote ledger, so that what an earlier version scheduled in the vote journal is
   * carried over before that journal is rewritten. Default: the one `kind` says, opened here.
   */
  store?: ReminderStore;
}

/**
 * Starts the reminders of `context.config` (enabled): the schedule's store first (on the file
 * state it carries over what an earlier version scheduled, before the reminder pipeline's ledger
 * rewrites the journal that held the last sent), then the reminder pipeline, then the timer (what
 * came due while the agent was down fires now).
 */
export async function startReminders(context: CapabilityContext<VotesEvents>, options: StartRemindersOptions): Promise<RunningReminders> {
  const { config, logger, metrics, now } = context;
  const settings = config.votes.reminders;
  const listeners = () => context.listeners?.('reminder') ?? [];
  // The `reminder` event takes part only when it has a listener as the reminders start (D1 of issue 32).
  const inProcess = listeners().length > 0 ? { listeners } : {};
  const redis = options.redis ? { redis: options.redis } : {};
  const hooks = configuredReminderHooks(config, { ...options.hookOptions, ...inProcess, ...redis });
  if (hooks.length === 0) throw new ListingAgentError('votes_no_hook', NO_REMINDER_HOOK);
  const directory = options.directory ?? stateDirectory(config);
  const store = options.store ?? reminderStoreFor(context, options);
  await store.open();
  // A reminder's key is kept until its vote's expiry + delay + maxLateness + keepKeysFor: past any time it can fire.
  const keepKeysForMs = config.votes.keepKeysFor + settings.delay + settings.maxLateness;
  const ledger = reminderLedger(context, options, directory, keepKeysForMs);
  const pipeline = createVotePipeline({
    ledger,
    hooks,
    logger: logger.child({ reminders: true }),
    now,
    onFinished: (_vote, gaveUp) => {
      metrics.reminders.inc({ result: gaveUp ? 'failed' : 'sent' });
    },
  });
  await pipeline.start().catch(async (error: unknown) => {
    await store.close();
    throw error;
  });
  const reminders = makeReminders(context, options, (votes) => ingestByRoad(pipeline, votes), store);
  try {
    await reminders.start();
  } catch (error) {
    await pipeline.stop(now());
    await ledger.close();
    await store.close();
    throw error;
  }
  const leadership = options.leadership;
  const onChange = () => void reminders.fire();
  leadership?.on('change', onChange);
  return {
    reminders,
    pipeline,
    ledger,
    async stop(deadline) {
      leadership?.off('change', onChange);
      await reminders.stop();
      await pipeline.stop(deadline);
      await ledger.close();
    },
  };
}

/** Where the schedule is kept: this agent's journal in the state directory, memory, or the Redis every agent shares. */
export function reminderStoreFor(
  context: CapabilityContext<VotesEvents>,
  options: Pick<StartRemindersOptions, 'kind' | 'redis' | 'directory' | 'leadership'>,
): ReminderStore {
  const { config, logger } = context;
  const delayMs = config.votes.reminders.delay;
  if (options.kind === 'memory') return createLocalReminderStore({ delayMs });
  if (options.kind === 'file') return createLocalReminderStore({ directory: options.directory ?? stateDirectory(config), delayMs, logger });
  if (options.redis === undefined) throw new ListingAgentError('votes_ledger_redis', 'vote reminders on Redis need a Redis connection');
  const { leadership } = options;
  // Only the leader fires: each firing script checks its fencing token.
  const fence = leadership === undefined ? {} : { fence: () => leadership.fencingToken };
  return createRedisReminderStore({ connection: options.redis, delayMs, ...fence });
}

/** The reminder pipeline's ledger: its own, beside the rewards' (a directory, or a Redis namespace). */
function reminderLedger(
  context: CapabilityContext<VotesEvents>,
  options: StartRemindersOptions,
  directory: string,
  keepKeysForMs: number,
): VoteLedger {
  const { config, now } = context;
  if (options.kind === 'memory') return createMemoryVoteLedger({ keepKeysForMs });
  if (options.kind === 'redis') {
    if (options.redis === undefined || options.agentId === undefined || config.state.redis === undefined) {
      const needs = 'vote reminders on Redis need state.redis and the agent\'s Redis connection and agent ID';
      throw new ListingAgentError('votes_ledger_redis', needs);
    }
    const { redis, agentId } = options;
    const shared = { connection: redis, agentId, leaseMs: config.state.redis.lease, namespace: REDIS_KEYS.remindersLedger };
    return createRedisVoteLedger({ ...shared, keepKeysForMs, now, logger: context.logger });
  }
  return createFileVoteLedger({ directory: join(directory, 'reminders'), keepKeysForMs, now });
}

/**
 * The one timer over the schedule. Only the leader fires (with several agents); with Redis, the
 * leader looks at the shared schedule at least every `lookMs` (5 s: other agents schedule there
 * too); alone, steps of at most a minute, each re-reading the clock (an injected clock that jumps
 * 12 h fires too).
 */
function makeReminders(
  context: CapabilityContext<VotesEvents>,
  options: StartRemindersOptions,
  send: (votes: readonly Vote[]) => Promise<unknown>,
  store: ReminderStore,
): Reminders {
  const { config, logger, metrics, now } = context;
  const count = (result: 'scheduled' | 'skipped', n: number) => metrics.reminders.inc({ result }, n);
  const leadership = options.leadership;
  const mayFire = leadership ? { mayFire: () => leadership.isLeader } : {};
  const maxStepMs = options.lookMs ?? (options.kind === 'redis' ? 5_000 : 60_000);
  return createReminders({ store, send, maxLatenessMs: config.votes.reminders.maxLateness, logger, now, count, ...mayFire, maxStepMs });
}

/** Hands reminders to the pipeline, each on the road its vote came by (the pipeline marks a batch with one road). */
async function ingestByRoad(pipeline: VotePipeline, votes: readonly Vote[]): Promise<void> {
  const polled = votes.filter((vote) => vote.road === 'poll');
  const pushed = votes.filter((vote) => vote.road !== 'poll');
  if (polled.length > 0) await pipeline.ingest(polled, 'poll');
  if (pushed.length > 0) await pipeline.ingest(pushed, 'webhook');
}
