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
import { createFileReminderJournal } from './journal-file.js';
import { createMemoryReminderJournal, createReminders, type Reminders } from './reminders.js';

/*
 * The reminders as the config describes them, wired from the vote pipeline's own parts: a second
 * pipeline instance (its own ledger, `<state.directory>/reminders/votes.journal`, its own hooks)
 * gives each reminder the rewards' retries, dead letters and crash recovery.
 */

/** The in-process reminder hook's name (the `reminder` event). */
const REMINDER_EVENT_HOOK = 'reminder-event';
/** The reminder stream hook's name. */
const REMINDER_STREAM_HOOK = 'reminder-stream';

/** The reminder hooks of `config`: the `reminder` event's listeners, `votes.reminders.hooks`, then the stream. */
function configuredReminderHooks(
  config: ListingAgentConfig,
  options: HooksFromConfigOptions & { listeners?: () => readonly ((vote: Vote) => unknown)[]; redis?: RedisConnection } = {},
): VoteHook[] {
  const { listeners, redis, ...hookOptions } = options;
  const settings = config.votes.reminders;
  const hooks = hooksFromConfig(settings.hooks, { ...hookOptions, reservedNames: [REMINDER_EVENT_HOOK, REMINDER_STREAM_HOOK] });
  const stream = config.votes.stream;
  if (stream.enabled && redis !== undefined) {
    const markerTtlMs = config.votes.keepKeysFor + settings.delay + settings.maxLateness;
    const hook = createStreamHook({ connection: redis, key: `${stream.key}:reminders`, maxLength: stream.maxLength, markerTtlMs });
    hooks.push({ name: REMINDER_STREAM_HOOK, retries: hook.retries, run: (vote, context) => hook.run(vote, context) });
  }
  if (listeners === undefined) return hooks;
  return [createInProcessHook({ name: REMINDER_EVENT_HOOK, listeners, retries: HOOK_DEFAULTS.retries }), ...hooks];
}

/** The running reminders of a votes capability. */
export interface RunningReminders {
  reminders: Reminders;
  pipeline: VotePipeline;
  ledger: VoteLedger;
  stop(deadline: number): Promise<void>;
}

/** Options of {@link startReminders}. */
export interface StartRemindersOptions {
  /** `file` (default) or `memory`; `redis` runs on the file ledger of this agent (not shared). */
  kind: 'file' | 'memory' | 'redis';
  hookOptions?: HooksFromConfigOptions;
  redis?: RedisConnection;
  leadership?: Leadership;
  /** Directory override (tests). Default: the config's state directory. */
  directory?: string;
}

/** Starts the reminders of `context.config` (enabled): the reminder pipeline first, then the schedule. */
export async function startReminders(context: CapabilityContext<VotesEvents>, options: StartRemindersOptions): Promise<RunningReminders> {
  const { config, logger, metrics, now } = context;
  const settings = config.votes.reminders;
  const directory = options.directory ?? stateDirectory(config);
  // A reminder's key is kept until its vote's expiry + delay + maxLateness + keepKeysFor: past any time it can fire.
  const keepKeysForMs = config.votes.keepKeysFor + settings.delay + settings.maxLateness;
  const memory = options.kind === 'memory';
  const ledger = memory ? createMemoryVoteLedger({ keepKeysForMs }) : createFileVoteLedger({ directory: join(directory, 'reminders'), keepKeysForMs, now });
  const listeners = () => context.listeners?.('reminder') ?? [];
  const hooks = configuredReminderHooks(config, { ...options.hookOptions, listeners, ...(options.redis ? { redis: options.redis } : {}) });
  const pipeline = createVotePipeline({
    ledger,
    hooks,
    logger: logger.child({ reminders: true }),
    now,
    emit: (event, ...args) => {
      if (event === 'voteHookRan') {
        const run = args[0] as { result: string };
        if (run.result === 'ok') metrics.reminders.inc({ result: 'sent' });
        if (run.result === 'dead_letter') metrics.reminders.inc({ result: 'failed' });
      }
    },
  });
  await pipeline.start();
  const leadership = options.leadership;
  const reminders = createReminders({
    journal: memory ? createMemoryReminderJournal() : createFileReminderJournal(directory),
    send: (votes) => pipeline.ingest(votes, 'poll'),
    delayMs: settings.delay,
    maxLatenessMs: settings.maxLateness,
    logger,
    now,
    ...(leadership ? { mayFire: () => leadership.isLeader, maxStepMs: 60_000 } : {}),
    count: (result, n) => metrics.reminders.inc({ result }, n),
  });
  try {
    await reminders.start();
  } catch (error) {
    await pipeline.stop(now());
    await ledger.close();
    throw error;
  }
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
