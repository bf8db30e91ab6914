import type { Capability, CapabilityContext } from '../agent/capability.js';
import type { ScheduleFactory } from '../stats/scheduler.js';
import { configuredVoteHooks, type VoteLedgerKind, votesLedgerFor } from './configured.js';
import type { HooksFromConfigOptions } from './hooks/index.js';
import type { VoteListener } from './hooks/in-process.js';
import { createVotePipeline, type VotePipeline, type VotePipelineOptions } from './pipeline.js';
import { createVotePoller, type PollResult, VOTES_COMPONENT, type VotePoller } from './poller.js';
import type { VoteHook, VoteLedger } from './types.js';

/** Options of {@link createVotesCapability}; everything else comes from the agent's context and `config.votes`. */
export interface VotesCapabilityOptions {
  /**
   * The vote ledger: `file` (default) is `<state.directory>/votes.journal`, `memory` keeps
   * nothing across restarts (for an agent on a memory store), or a ledger of your own. The
   * capability opens it (through the pipeline) and closes it on stop.
   */
  ledger?: VoteLedgerKind | VoteLedger;
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
export interface VotesCapability extends Capability {
  /** The running pipeline (both roads feed it), or undefined before start and after stop. */
  readonly pipeline: VotePipeline | undefined;
  /** Polls the votes cursor now (what a tick does). Rejects when the capability is not running. */
  pollNow(): Promise<PollResult>;
}

/**
 * Polls the votes cursor and runs the reward hooks once per vote. On start: the ledger is opened
 * and the votes a crash left pending re-run (the pipeline), then the poller starts. On stop, in
 * the reverse order: the poller stops taking pages, the hooks in flight finish or are aborted at
 * the deadline (their votes stay pending for the next start), and the ledger is closed.
 */
export function createVotesCapability(options: VotesCapabilityOptions = {}): VotesCapability {
  let pipeline: VotePipeline | undefined;
  let poller: VotePoller | undefined;
  let ledger: VoteLedger | undefined;

  function makeLedger(context: CapabilityContext): VoteLedger {
    const given = options.ledger ?? 'file';
    return typeof given === 'string' ? votesLedgerFor(context.config, given, { now: context.now }) : given;
  }

  function makeHooks(context: CapabilityContext): readonly VoteHook[] {
    if (options.hooks) return options.hooks;
    const listeners = (): readonly VoteListener[] => context.listeners?.('vote') ?? [];
    return configuredVoteHooks(context.config, { ...options.hookOptions, listeners });
  }

  async function closeLedger(): Promise<void> {
    const open = ledger;
    ledger = undefined;
    await open?.close();
  }

  return {
    name: VOTES_COMPONENT,
    get pipeline() {
      return pipeline;
    },
    async start(context) {
      const { config } = context;
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
      poller = createVotePoller({
        client: context.client,
        store: context.store,
        pipeline: running,
        lookbackMs: config.votes.lookback,
        pollIntervalMs: config.votes.pollInterval,
        logger: context.logger,
        metrics: context.metrics,
        readiness: context.readiness,
        now: context.now,
        reportError: context.reportError,
        ...(options.projectIds ? { projectIds: options.projectIds } : {}),
        ...(options.schedules ? { schedules: options.schedules } : {}),
      });
      poller.start();
      context.logger.info(
        { hooks: hooks.map((hook) => hook.name), pollInterval: config.votes.pollInterval, lookback: config.votes.lookback, ledger: ledger.describe() },
        'votes: polling the cursor, rewards once per vote',
      );
    },
    async stop(deadline) {
      try {
        await poller?.stop(deadline);
        await pipeline?.stop(deadline);
      } finally {
        poller = undefined;
        pipeline = undefined;
        await closeLedger();
      }
    },
    pollNow() {
      if (!poller) return Promise.reject(new Error('the votes capability is not running'));
      return poller.poll();
    },
  };
}
