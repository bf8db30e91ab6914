import type { Capability, CapabilityContext, ServiceProject } from '../runtime/capability.js';
import type { Readiness } from '../runtime/readiness.js';
import { standingByDetail, type Leadership } from '../runtime/leadership.js';
import type { RedisConnection } from '../redis/connection.js';
import type { ScheduleFactory } from '../runtime/scheduler.js';
import { rewardHooks, type VoteLedgerKind, votesLedgerFor, withConfigSecrets } from './configured.js';
import type { HooksFromConfigOptions } from './hooks/index.js';
import type { VoteListener } from './hooks/in-process.js';
import { createVotePipeline, type VotePipeline, type VotePipelineOptions } from './pipeline.js';
import { createVotePoller, type PollResult, VOTES_COMPONENT, type VotePoller } from './poller.js';
import type { VoteHook, VoteLedger, VotesEvents } from './types.js';
import { LedgerCloseError } from './ledger-file-space.js';
import { createVotesReadiness, ledgerSizes, type VotesReadiness, watchLedger } from './ledger-readiness.js';
import { reminderStoreFor, startReminders, type RunningReminders } from './reminders/configured.js';
import { withReminders } from './reminders/ingest.js';
import type { Reminders, ReminderStore } from './reminders/reminders.js';
import { errorMessage } from '../errors.js';

/** Options of {@link createVotesCapability}; everything else comes from the agent's context and `config.votes`. */
export interface VotesCapabilityOptions {
  /**
   * The vote ledger: `file` (default) is `<state.directory>/votes.journal`, `memory` keeps
   * nothing across restarts (for an agent on a memory store), `redis` is shared by every agent on
   * `state.redis` (needs `redis`), or a ledger of your own. The capability opens it (through the
   * pipeline) and closes it on stop.
   */
  ledger?: VoteLedgerKind | VoteLedger;
  /**
   * The agent's Redis connection and ID, for the `redis` ledger and the reward stream hook
   * (`votes.stream`). Default: none.
   */
  redis?: { connection: RedisConnection; agentId: string };
  /**
   * Several agents share the work: the pipeline runs on every one (webhook deliveries feed it),
   * but the cursor poller only while `leadership` says this agent leads. It is started when the
   * agent takes the lease and stopped (its page in flight finished, within `pollerStopDeadlineMs`)
   * when it loses it. Default: none, the poller always runs (one agent).
   */
  leadership?: Leadership;
  /**
   * Whether to poll the votes cursor. Default true. False: only the vote pipeline runs (the
   * journal's pending votes re-run, webhook deliveries rewarded), which is what the agent wires
   * for the webhook receiver when `votes.enabled` is off; `votes` then reads `rewards webhook
   * votes; the cursor is not polled (votes.enabled is off)`.
   */
  poll?: boolean;
  /** How long the poller has to stop when leadership is lost. Default 5 000 ms. */
  pollerStopDeadlineMs?: number;
  /**
   * With `votes.reminders`: the longest timer step of the reminders, each re-reading the clock
   * (with `state.redis`, also how often the leader looks at the shared schedule). Default 60 000 ms
   * (5 000 ms with `state.redis`).
   */
  reminderLookMs?: number;
  /**
   * The reward hooks. Default: the in-process hook over the agent's `vote` listeners (named
   * `vote-event`, only when one is attached as the capability starts), then `votes.hooks` of the
   * config and the reward stream. With none at all the capability does not start.
   */
  hooks?: readonly VoteHook[];
  /** How the configured hooks are made (exec environment, http dispatcher, clock). Default: none. */
  hookOptions?: HooksFromConfigOptions;
  /** The projects to poll (see `VotePollerOptions.projectIds`). Default: by the client's credential. */
  projectIds?: () => Promise<string[]>;
  /** Makes the poll schedule. Default: croner; tests pass a manual scheduler. */
  schedules?: ScheduleFactory;
  /** How a log line names a setting (`votes.lookback`). Default: its config path; the daemon adds its variable. */
  settingName?: (path: string) => string;
  /** Pipeline tuning (retry backoff and its timer, jitter, concurrency, compaction). Default: the pipeline's. */
  pipeline?: Partial<Pick<VotePipelineOptions, 'random' | 'backoff' | 'schedule' | 'concurrency' | 'compactEveryMs'>>;
}

/** The `votes` capability, with its pipeline for the webhook receiver. */
export interface VotesCapability extends Capability<VotesEvents> {
  /** The running pipeline (both roads feed it), or undefined before start and after stop. */
  readonly pipeline: VotePipeline | undefined;
  /** The vote reminders (`votes.reminders.enabled`), or undefined when off or not running. */
  readonly reminders: Reminders | undefined;
  /**
   * Polls the votes cursor now (what a tick does). Rejects when the capability is not running, or
   * when it stands by (another agent leads and polls).
   */
  pollNow(): Promise<PollResult>;
  /**
   * Stops the cursor poller for good, keeping the pipeline running (the agent calls it on stop,
   * before it hands the leader lease over). Resolves at once when no poller runs.
   */
  stopPolling(deadline: number): Promise<void>;
}

/**
 * Polls the votes cursor and runs the reward hooks once per vote. On start: the ledger is opened
 * and the votes a crash left pending re-run (the pipeline), then the poller starts, once the
 * service answered (it starts with the agent, before the service: the webhook receiver feeds
 * the pipeline meanwhile, and `votes` reads `cursor waits for the service (<why>)`). On stop, in
 * the reverse order: the poller stops taking pages, the hooks in flight finish or are aborted at
 * the deadline (their votes stay pending for the next start), and the ledger is closed.
 *
 * With `leadership` (several agents on one Redis), the pipeline runs on every agent and the
 * poller only on the leader; a standby's `votes` component reads `standing by (leader: <id>)`.
 */
export function createVotesCapability(options: VotesCapabilityOptions = {}): VotesCapability {
  const v: VotesState = {
    options,
    pipeline: undefined,
    reminders: undefined,
    poller: undefined,
    ledger: undefined,
    started: undefined,
    startedAt: 0,
    pollerChain: Promise.resolve(),
    pollingEnded: false,
    project: undefined,
    serviceProblem: 'not reached yet',
    readiness: createVotesReadiness({ set: () => false }, VOTES_COMPONENT),
    unwatchLedger: () => undefined,
    onLeadership: () => void reconcilePoller(v),
    onLeader: () => {
      if (v.poller === undefined && v.started !== undefined && options.leadership) void reconcilePoller(v);
    },
  };
  return {
    name: VOTES_COMPONENT,
    startsBeforeService: true,
    get pipeline() {
      return v.pipeline;
    },
    get reminders() {
      return v.reminders?.reminders;
    },
    start: (context) => start(v, context),
    serviceWaiting(reason) {
      v.serviceProblem = reason;
      if (v.started !== undefined && v.project === undefined) markWaiting(v, v.started);
    },
    async serviceReached(reached) {
      v.project = reached;
      const context = v.started;
      if (context === undefined || v.pipeline === undefined) return;
      if (options.leadership !== undefined) await reconcilePoller(v);
      else if (v.poller === undefined && !v.pollingEnded) startPoller(v, context, v.pipeline, reached);
    },
    stop: (deadline) => stop(v, deadline),
    stopPolling: (deadline) => stopPolling(v, deadline),
    pollNow: () => pollNow(v),
  };
}

/** The state of one votes capability. */
interface VotesState {
  readonly options: VotesCapabilityOptions;
  pipeline: VotePipeline | undefined;
  reminders: RunningReminders | undefined;
  poller: VotePoller | undefined;
  ledger: VoteLedger | undefined;
  /** The context while started (set once the pipeline runs). */
  started: CapabilityContext<VotesEvents> | undefined;
  /** Epoch ms of the last start: where a project's first poll lists from (less `votes.lookback`). */
  startedAt: number;
  /** Poller starts and stops, in order. */
  pollerChain: Promise<void>;
  /** Set by stopPolling(): no poller starts again until the next start(). */
  pollingEnded: boolean;
  /** The project the service answered as: the poller waits for it. */
  project: ServiceProject | undefined;
  /** Why the service has not answered yet (for the readiness detail). */
  serviceProblem: string;
  /** The `votes` component, with the ledger's write health on top (made at each start). */
  readiness: VotesReadiness;
  /** Stops following the ledger's write health (readiness, metric, log). */
  unwatchLedger: () => void;
  /** Leadership listeners, made once (so that `off` finds them). */
  readonly onLeadership: () => void;
  readonly onLeader: () => void;
}

/** `votes` of a capability that does not poll: the pipeline alone, ready once it runs. */
const PIPELINE_ONLY = 'rewards webhook votes; the cursor is not polled (votes.enabled is off)';

/** `votes` while the cursor waits for the service: what runs meanwhile. */
function markWaiting(v: VotesState, context: CapabilityContext<VotesEvents>): void {
  if (v.options.poll === false) {
    v.readiness.set(VOTES_COMPONENT, true, PIPELINE_ONLY);
    return;
  }
  const meanwhile = context.config.webhooks.enabled ? 'webhook votes are rewarded' : 'votes left pending by the last run are rewarded';
  v.readiness.set(VOTES_COMPONENT, false, `cursor waits for the service (${v.serviceProblem}); ${meanwhile}`);
}

function makeLedger(v: VotesState, context: CapabilityContext<VotesEvents>): VoteLedger {
  const given = v.options.ledger ?? 'file';
  const health = context.store.writeHealth;
  // The file ledger shares the file store's write health when both are in one directory.
  const shared = { now: context.now, ...(v.options.redis ? { redis: v.options.redis } : {}), ...(health ? { writeHealth: health } : {}) };
  return typeof given === 'string' ? votesLedgerFor(context.config, given, shared) : given;
}

function makeHooks(v: VotesState, context: CapabilityContext<VotesEvents>): readonly VoteHook[] {
  const { options } = v;
  const listeners = (): readonly VoteListener[] => context.listeners?.('vote') ?? [];
  const redis = options.redis ? { redis: options.redis.connection } : {};
  return rewardHooks(context.config, options.hooks, { ...options.hookOptions, listeners, ...redis });
}

/** The poller over `running`, its readiness writes dropped once it is no longer the current one. */
function startPoller(v: VotesState, context: CapabilityContext<VotesEvents>, running: VotePipeline, own: ServiceProject): void {
  const { config } = context;
  const readiness: Pick<Readiness, 'set'> = {
    set: (component, ready, detail) => (v.poller === made ? v.readiness.set(component, ready, detail) : false),
  };
  const made: VotePoller = createVotePoller({
    client: context.client,
    store: context.store,
    pipeline: running,
    lookbackMs: config.votes.lookback,
    startedAt: v.startedAt,
    ...(v.options.settingName ? { settingName: v.options.settingName } : {}),
    pollIntervalMs: config.votes.pollInterval,
    logger: context.logger,
    metrics: context.metrics,
    readiness,
    now: context.now,
    reportError: context.reportError,
    ...(v.options.projectIds ? { projectIds: v.options.projectIds } : {}),
    ...(v.options.schedules ? { schedules: v.options.schedules } : {}),
    // The agent asked `@me` already: the poller need not ask again.
    ownProjectId: own.id,
  });
  v.poller = made;
  made.start();
}

/** Starts or stops the poller to match leadership, one step at a time. */
function reconcilePoller(v: VotesState): Promise<void> {
  v.pollerChain = v.pollerChain.then(async () => {
    const context = v.started;
    const leadership = v.options.leadership;
    if (context === undefined || leadership === undefined || v.pipeline === undefined) return;
    if (leadership.isLeader && !v.pollingEnded && v.poller === undefined && v.project !== undefined) {
      context.logger.info({}, 'votes: this agent leads, polling the cursor');
      startPoller(v, context, v.pipeline, v.project);
    } else if ((!leadership.isLeader || v.pollingEnded) && v.poller !== undefined) {
      const running = v.poller;
      v.poller = undefined;
      context.logger.info({ leader: leadership.leaderId ?? null }, 'votes: no longer the leader, the cursor poller stops');
      await running.stop(context.now() + (v.options.pollerStopDeadlineMs ?? 5_000)).catch((error: unknown) => context.reportError(error));
    }
    if (v.poller === undefined && v.started !== undefined) {
      if (v.project === undefined || v.options.poll === false) markWaiting(v, context);
      else v.readiness.set(VOTES_COMPONENT, true, `${standingByDetail(leadership.leaderId)}; webhook votes are rewarded here`);
    }
  });
  return v.pollerChain;
}

/** The reminders' store kind: the ledger's, and this agent's journal beside a ledger of the bot's own. */
const reminderKind = (v: VotesState): VoteLedgerKind => (typeof v.options.ledger === 'string' ? v.options.ledger : 'file');

/** Starts the reminders over `store` (opened already), beside `running` (stopped, with the ledger, when they cannot start). */
async function startOwnReminders(
  v: VotesState,
  context: CapabilityContext<VotesEvents>,
  running: VotePipeline,
  store: ReminderStore,
): Promise<RunningReminders> {
  const { redis, leadership, hookOptions } = v.options;
  try {
    return await startReminders(context, {
      kind: reminderKind(v),
      store,
      hookOptions: withConfigSecrets(context.config, hookOptions ?? {}),
      ...(redis ? { redis: redis.connection, agentId: redis.agentId } : {}),
      ...(leadership ? { leadership } : {}),
      ...(v.options.reminderLookMs ? { lookMs: v.options.reminderLookMs } : {}),
    });
  } catch (error) {
    await store.close().catch(() => undefined);
    await running.stop(context.now());
    await closeLedger(v).catch(() => undefined);
    throw error;
  }
}

async function closeLedger(v: VotesState, context?: CapabilityContext<VotesEvents>): Promise<void> {
  const open = v.ledger;
  v.ledger = undefined;
  v.unwatchLedger();
  v.unwatchLedger = () => undefined;
  await open?.close().catch((error: unknown) => {
    // Never only at debug: votes may be rewarded twice because of it, and the line names them.
    const again = error instanceof LedgerCloseError ? { rewardedAgain: error.rewardedAgain.slice(0, 1_000) } : {};
    const fields = { ledger: open.describe(), ...again, err: errorMessage(error) };
    context?.logger.error(fields, 'votes: could not close the vote ledger cleanly');
    throw error;
  });
}

/** What the capability says it does when it starts. */
function startMessage(options: VotesCapabilityOptions, project: ServiceProject | undefined): string {
  if (options.poll === false) return 'votes: votes.enabled is off, so the vote pipeline runs for the webhook receiver alone';
  if (options.leadership) return 'votes: rewards once per vote; the cursor is polled by the leader';
  if (project) return 'votes: polling the cursor, rewards once per vote';
  return 'votes: rewards once per vote; the cursor is polled once the service answers';
}

async function start(v: VotesState, context: CapabilityContext<VotesEvents>): Promise<void> {
  const { config } = context;
  const { options } = v;
  v.started = undefined;
  v.startedAt = context.now();
  v.pollingEnded = options.poll === false;
  // Hooks first: a bad hook name is a configuration error, before any file is touched.
  const hooks = makeHooks(v, context);
  v.readiness = createVotesReadiness(context.readiness, VOTES_COMPONENT);
  const ledger = (v.ledger = makeLedger(v, context));
  const redis = options.redis ? { redis: options.redis.connection, leadership: options.leadership } : {};
  const reminderStore = config.votes.reminders.enabled ? reminderStoreFor(context, { kind: reminderKind(v), ...redis }) : undefined;
  const { logger, metrics, now, emit } = context;
  const running = createVotePipeline({ ...options.pipeline, ledger, hooks, logger, metrics, now, emit });
  try {
    // Opened before the vote ledger: what an earlier version scheduled in the vote journal is carried over before it is rewritten.
    await reminderStore?.open();
    await running.start();
  } catch (error) {
    await reminderStore?.close().catch(() => undefined);
    await closeLedger(v).catch(() => undefined);
    throw error;
  }
  const reminders = (v.reminders = reminderStore && (await startOwnReminders(v, context, running, reminderStore)));
  // Both roads go through it: each batch is recorded, then its reminders scheduled, before the answer.
  v.pipeline = reminders === undefined ? running : withReminders(running, reminders);
  v.unwatchLedger = watchLedger(v.readiness, context, ledger);
  context.metrics.watchVoteLedger(() => ledgerSizes(v.ledger));
  v.started = context;
  v.project = context.project;
  v.serviceProblem = 'not reached yet';
  const leadership = options.leadership;
  if (leadership === undefined) {
    if (v.project === undefined || v.pollingEnded) markWaiting(v, context);
    else startPoller(v, context, v.pipeline, v.project);
  } else {
    // Once each, however many starts came without a stop.
    leadership.off('change', v.onLeadership);
    leadership.off('leader', v.onLeader);
    leadership.on('change', v.onLeadership);
    leadership.on('leader', v.onLeader);
    await reconcilePoller(v);
  }
  const { pollInterval, lookback } = config.votes;
  const fields = { hooks: hooks.map((hook) => hook.name), pollInterval, lookback, ledger: ledger.describe() };
  context.logger.info(leadership ? { ...fields, poller: 'while this agent leads' } : fields, startMessage(options, v.project));
}

async function stop(v: VotesState, deadline: number): Promise<void> {
  const context = v.started;
  v.started = undefined;
  v.options.leadership?.off('change', v.onLeadership);
  v.options.leadership?.off('leader', v.onLeader);
  try {
    // A poller start or stop under way finishes first; then nothing starts one again.
    await v.pollerChain.catch(() => undefined);
    await v.poller?.stop(deadline);
    await v.pipeline?.stop(deadline);
    await v.reminders?.stop(deadline);
  } finally {
    v.poller = undefined;
    v.pipeline = undefined;
    v.reminders = undefined;
    await closeLedger(v, context);
  }
}

async function stopPolling(v: VotesState, deadline: number): Promise<void> {
  v.pollingEnded = true;
  if (v.options.leadership === undefined) {
    const running = v.poller;
    v.poller = undefined;
    await running?.stop(deadline);
    return;
  }
  await reconcilePoller(v);
}

function pollNow(v: VotesState): Promise<PollResult> {
  const { options, poller, pipeline } = v;
  if (options.poll === false) return Promise.reject(new Error('votes.enabled is off: the cursor is not polled'));
  if (!poller && pipeline && v.project === undefined) {
    return Promise.reject(new Error(`the votes cursor waits for the service (${v.serviceProblem})`));
  }
  if (!poller && pipeline && options.leadership) {
    const leader = options.leadership.leaderId ?? 'none yet';
    return Promise.reject(new Error(`this agent stands by: the leader (${leader}) polls the votes cursor`));
  }
  if (!poller) return Promise.reject(new Error('the votes capability is not running'));
  return poller.poll();
}
