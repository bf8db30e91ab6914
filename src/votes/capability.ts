import type { Capability, CapabilityContext, ServiceProject } from '../runtime/capability.js';
import type { Readiness } from '../runtime/readiness.js';
import { standingByDetail, type Leadership } from '../runtime/leadership.js';
import type { RedisConnection } from '../redis/connection.js';
import type { ScheduleFactory } from '../runtime/scheduler.js';
import type { VoteLedgerSizes } from '../runtime/metrics.js';
import { configuredVoteHooks, type VoteLedgerKind, votesLedgerFor } from './configured.js';
import type { HooksFromConfigOptions } from './hooks/index.js';
import type { VoteListener } from './hooks/in-process.js';
import { createVotePipeline, type VotePipeline, type VotePipelineOptions } from './pipeline.js';
import { createVotePoller, type PollResult, VOTES_COMPONENT, type VotePoller } from './poller.js';
import type { VoteHook, VoteLedger, VotesEvents } from './types.js';

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
   * The reward hooks. Default: the in-process hook over the agent's `vote` listeners (named
   * `vote-event`), then `votes.hooks` of the config.
   */
  hooks?: readonly VoteHook[];
  /** How the configured hooks are made (exec environment, http dispatcher, clock). Default: none. */
  hookOptions?: HooksFromConfigOptions;
  /** The projects to poll (see `VotePollerOptions.projectIds`). Default: by the client's credential. */
  projectIds?: () => Promise<string[]>;
  /** Makes the poll schedule. Default: croner; tests pass a manual scheduler. */
  schedules?: ScheduleFactory;
  /** Pipeline tuning (retry backoff and its timer, jitter, concurrency, compaction). Default: the pipeline's. */
  pipeline?: Partial<Pick<VotePipelineOptions, 'random' | 'backoff' | 'schedule' | 'concurrency' | 'compactEveryMs'>>;
}

/** The `votes` capability, with its pipeline for the webhook receiver. */
export interface VotesCapability extends Capability<VotesEvents> {
  /** The running pipeline (both roads feed it), or undefined before start and after stop. */
  readonly pipeline: VotePipeline | undefined;
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

/** The ledger's sizes for `/metrics`; a ledger of the bot's own that throws must not break the scrape. */
function ledgerSizes(ledger: VoteLedger | undefined): VoteLedgerSizes | undefined {
  try {
    return ledger?.stats();
  } catch {
    return undefined;
  }
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
  let pipeline: VotePipeline | undefined;
  let poller: VotePoller | undefined;
  let ledger: VoteLedger | undefined;
  /** The context while started (set once the pipeline runs). */
  let started: CapabilityContext<VotesEvents> | undefined;
  /** Poller starts and stops, in order. */
  let pollerChain: Promise<void> = Promise.resolve();
  /** Set by stopPolling(): no poller starts again until the next start(). */
  let pollingEnded = false;
  /** The project the service answered as: the poller waits for it. */
  let project: ServiceProject | undefined;
  /** Why the service has not answered yet (for the readiness detail). */
  let serviceProblem = 'not reached yet';

  /** `votes` of a capability that does not poll: the pipeline alone, ready once it runs. */
  const PIPELINE_ONLY = 'rewards webhook votes; the cursor is not polled (votes.enabled is off)';

  /** `votes` while the cursor waits for the service: what runs meanwhile. */
  function markWaiting(context: CapabilityContext<VotesEvents>): void {
    if (options.poll === false) {
      context.readiness.set(VOTES_COMPONENT, true, PIPELINE_ONLY);
      return;
    }
    const meanwhile = context.config.webhooks.enabled ? 'webhook votes are rewarded' : 'votes left pending by the last run are rewarded';
    context.readiness.set(VOTES_COMPONENT, false, `cursor waits for the service (${serviceProblem}); ${meanwhile}`);
  }

  function makeLedger(context: CapabilityContext<VotesEvents>): VoteLedger {
    const given = options.ledger ?? 'file';
    return typeof given === 'string' ? votesLedgerFor(context.config, given, { now: context.now, ...(options.redis ? { redis: options.redis } : {}) }) : given;
  }

  function makeHooks(context: CapabilityContext<VotesEvents>): readonly VoteHook[] {
    if (options.hooks) return options.hooks;
    const listeners = (): readonly VoteListener[] => context.listeners?.('vote') ?? [];
    return configuredVoteHooks(context.config, { ...options.hookOptions, listeners, ...(options.redis ? { redis: options.redis.connection } : {}) });
  }

  /** The poller over `running`, its readiness writes dropped once it is no longer the current one. */
  function startPoller(context: CapabilityContext<VotesEvents>, running: VotePipeline, own: ServiceProject): void {
    const { config } = context;
    const readiness: Pick<Readiness, 'set'> = {
      set: (component, ready, detail) => (poller === made ? context.readiness.set(component, ready, detail) : false),
    };
    const made: VotePoller = createVotePoller({
      client: context.client,
      store: context.store,
      pipeline: running,
      lookbackMs: config.votes.lookback,
      pollIntervalMs: config.votes.pollInterval,
      logger: context.logger,
      metrics: context.metrics,
      readiness,
      now: context.now,
      reportError: context.reportError,
      ...(options.projectIds ? { projectIds: options.projectIds } : {}),
      ...(options.schedules ? { schedules: options.schedules } : {}),
      // The agent asked `@me` already: the poller need not ask again.
      ownProjectId: own.id,
    });
    poller = made;
    made.start();
  }

  /** Starts or stops the poller to match leadership, one step at a time. */
  function reconcilePoller(): Promise<void> {
    pollerChain = pollerChain.then(async () => {
      const context = started;
      const leadership = options.leadership;
      if (context === undefined || leadership === undefined || pipeline === undefined) return;
      if (leadership.isLeader && !pollingEnded && poller === undefined && project !== undefined) {
        context.logger.info({}, 'votes: this agent leads, polling the cursor');
        startPoller(context, pipeline, project);
      } else if ((!leadership.isLeader || pollingEnded) && poller !== undefined) {
        const running = poller;
        poller = undefined;
        context.logger.info({ leader: leadership.leaderId ?? null }, 'votes: no longer the leader, the cursor poller stops');
        await running.stop(context.now() + (options.pollerStopDeadlineMs ?? 5_000)).catch((error: unknown) => context.reportError(error));
      }
      if (poller === undefined && started !== undefined) {
        if (project === undefined || options.poll === false) markWaiting(context);
        else context.readiness.set(VOTES_COMPONENT, true, `${standingByDetail(leadership.leaderId)}; webhook votes are rewarded here`);
      }
    });
    return pollerChain;
  }

  const onLeadership = () => void reconcilePoller();
  const onLeader = () => {
    if (poller === undefined && started !== undefined && options.leadership) void reconcilePoller();
  };

  async function closeLedger(): Promise<void> {
    const open = ledger;
    ledger = undefined;
    await open?.close();
  }

  return {
    name: VOTES_COMPONENT,
    startsBeforeService: true,
    get pipeline() {
      return pipeline;
    },
    async start(context) {
      const { config } = context;
      started = undefined;
      pollingEnded = options.poll === false;
      // Hooks first: a bad hook name is a configuration error, before any file is touched.
      const hooks = makeHooks(context);
      ledger = makeLedger(context);
      const running = createVotePipeline({
        ...options.pipeline,
        ledger,
        hooks,
        logger: context.logger,
        metrics: context.metrics,
        now: context.now,
        emit: context.emit,
      });
      try {
        await running.start();
      } catch (error) {
        await closeLedger().catch(() => undefined);
        throw error;
      }
      pipeline = running;
      context.metrics.watchVoteLedger(() => ledgerSizes(ledger));
      started = context;
      project = context.project;
      serviceProblem = 'not reached yet';
      const leadership = options.leadership;
      if (leadership === undefined) {
        if (project === undefined || pollingEnded) markWaiting(context);
        else startPoller(context, running, project);
      } else {
        leadership.on('change', onLeadership);
        leadership.on('leader', onLeader);
        await reconcilePoller();
      }
      context.logger.info(
        {
          hooks: hooks.map((hook) => hook.name),
          pollInterval: config.votes.pollInterval,
          lookback: config.votes.lookback,
          ledger: ledger.describe(),
          ...(leadership ? { poller: 'while this agent leads' } : {}),
        },
        options.poll === false
          ? 'votes: votes.enabled is off, so the vote pipeline runs for the webhook receiver alone'
          : leadership
            ? 'votes: rewards once per vote; the cursor is polled by the leader'
            : project
              ? 'votes: polling the cursor, rewards once per vote'
              : 'votes: rewards once per vote; the cursor is polled once the service answers',
      );
    },
    serviceWaiting(reason) {
      serviceProblem = reason;
      if (started !== undefined && project === undefined) markWaiting(started);
    },
    async serviceReached(reached) {
      project = reached;
      const context = started;
      if (context === undefined || pipeline === undefined) return;
      if (options.leadership !== undefined) await reconcilePoller();
      else if (poller === undefined && !pollingEnded) startPoller(context, pipeline, reached);
    },
    async stop(deadline) {
      started = undefined;
      options.leadership?.off('change', onLeadership);
      options.leadership?.off('leader', onLeader);
      try {
        // A poller start or stop under way finishes first; then nothing starts one again.
        await pollerChain.catch(() => undefined);
        await poller?.stop(deadline);
        await pipeline?.stop(deadline);
      } finally {
        poller = undefined;
        pipeline = undefined;
        await closeLedger();
      }
    },
    async stopPolling(deadline) {
      pollingEnded = true;
      if (options.leadership === undefined) {
        const running = poller;
        poller = undefined;
        await running?.stop(deadline);
        return;
      }
      await reconcilePoller();
    },
    pollNow() {
      if (options.poll === false) return Promise.reject(new Error('votes.enabled is off: the cursor is not polled'));
      if (!poller && pipeline && project === undefined) return Promise.reject(new Error(`the votes cursor waits for the service (${serviceProblem})`));
      if (!poller && pipeline && options.leadership) {
        return Promise.reject(new Error(`this agent stands by: the leader (${options.leadership.leaderId ?? 'none yet'}) polls the votes cursor`));
      }
      if (!poller) return Promise.reject(new Error('the votes capability is not running'));
      return poller.poll();
    },
  };
}
