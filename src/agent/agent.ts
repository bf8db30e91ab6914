import { EventEmitter } from 'node:events';
import type { Registry } from 'prom-client';
import type { ListingClient } from '../api/client.js';
import type { ListingAgentConfig } from '../config/schema.js';
import type { AgentHealth } from './health-wiring.js';
import type { AgentMetrics } from '../runtime/metrics.js';
import { createMetricsRecorder, type MetricsRecorder } from '../runtime/metrics-recorder.js';
import type { AgentCluster } from './cluster.js';
import type { LeaderOnlyCapability } from '../leader/gate.js';
import type { Leadership } from '../runtime/leadership.js';
import type { StateStore } from '../store/types.js';
import type { Capability, CapabilityContext, ServiceProject } from '../runtime/capability.js';
import { defaultCapabilities } from './default-capabilities.js';
import type { AgentPhase, ListingAgentOptions } from './options.js';
import type { BringUp } from './bring-up.js';
import { closeState, recordStart, watchStateWrites } from './state-writes.js';
import { followBot } from './embedded.js';
import type { AgentEvents } from './events.js';
import { HEADLINES, type AgentLogger } from '../log/agent-logger.js';
import { agentLogging } from './default-logger.js';
import { createReadiness, type Readiness } from '../runtime/readiness.js';
import { CLIENT_VERSION } from '../api/version.js';
import type { CommandsCapability } from '../commands/capability.js';
import type { CommandSyncResult } from '../commands/types.js';
import type { VotesCapability } from '../votes/capability.js';
import type { HasVoted, HasVotedQuery } from '../votes/has-voted.js';
import type { VotePipeline } from '../votes/pipeline.js';
import type { WebhooksCapability } from '../webhooks/capability.js';
import { metricsRegistry } from './lazy.js';
import { agentConfig } from './agent-config.js';
import { listenersAtStart } from './vote-listeners.js';
import { agentParts } from './agent-parts.js';
import { errorMessage } from '../errors.js';

export type { AgentConfigInput, AgentPhase, ListingAgentOptions } from './options.js';
export { parseConfig } from './agent-config.js';

const STATE_KEY = 'agent:lastRun';
const DEFAULT_RECONNECT_DELAYS_MS = [5_000, 10_000, 20_000, 40_000, 80_000, 160_000, 300_000];

/**
 * The listing agent: the same object whether embedded in a bot's code or run by
 * `listing-agent run`. It never touches `process`, registers no signal handler, and never throws
 * from a timer: failures are logged, emitted as `error`, and retried.
 *
 * With `state.redis` (and no `store` option) several agents share the work: the state, the vote
 * ledger and a leader lease live in Redis; the leader alone posts stats, syncs commands and polls
 * votes; every agent receives webhooks. Readiness shows `redis` and `leader`; `/metrics` shows
 * `listing_agent_redis_up` and `listing_agent_leader`.
 */
export class ListingAgent extends EventEmitter<AgentEvents> {
  readonly config: ListingAgentConfig;
  readonly readiness: Readiness;
  /** The agent's metrics, kept in memory; {@link ListingAgent.registry} serves them. */
  readonly metrics: AgentMetrics;
  readonly store: StateStore;
  readonly client: ListingClient;
  private readonly logger: AgentLogger;
  private readonly now: () => number;
  private readonly capabilities: Capability[];
  private readonly reconnectDelaysMs: readonly number[];
  private readonly ownsClient: boolean;
  private readonly cluster: AgentCluster | undefined;
  /** The health server and the status page on it (`health.enabled`): made by the first start(), their modules loaded then. */
  private health: AgentHealth | undefined;
  private readonly mode: NonNullable<ListingAgentOptions['mode']>;
  private phaseValue: AgentPhase = 'idle';
  private readonly aborter = new AbortController();
  private started: Capability[] = [];
  private stopping: Promise<void> | undefined;
  /** Made at the first hasVoted() (its module loaded then: a bot that never asks pays nothing). */
  private voteCheck: Promise<HasVoted> | undefined;
  private readonly tokenSource: string;
  /** The tries that bring the capabilities up (made by start()). */
  private bringingUp: BringUp | undefined;
  /** The start() under way or done (calls meanwhile share it); cleared when it fails, so that the next call starts again. */
  private starting: Promise<void> | undefined;
  private startDone = false;
  /** Writes the default logger's last summary of repeated lines (at the stop). */
  private readonly flushLog: () => void;
  /** Stops following the store's write health (set once the store is open). */
  private unwatchWrites: () => void = () => undefined;
  private readonly recorder: MetricsRecorder;
  private registryValue: Registry | undefined;
  /** As start() begins: refuses votes nobody would receive, and from then tells of a listener attached too late. */
  private readonly checkListeners: () => ReturnType<typeof listenersAtStart>;

  constructor(options: ListingAgentOptions) {
    super();
    this.config = agentConfig(options);
    this.now = options.now ?? Date.now;
    ({ logger: this.logger, flush: this.flushLog } = agentLogging(options.logger, this.config, this.now));
    this.readiness = createReadiness(this.now, (component, state) => this.emit('readiness', component, state));
    this.metrics = this.recorder = createMetricsRecorder(this.readiness);
    // A registry given is used at once (two agents on one registry are refused here); else one is
    // made, and prom-client loaded, when the health server or the bot first reads `registry`.
    if (options.registry !== undefined)
      this.registryValue = metricsRegistry.get().serveRecordedMetrics(this.recorder.recorded, options.registry);
    ({ store: this.store, cluster: this.cluster, client: this.client } = agentParts(this.config, options, this.logger));
    this.ownsClient = options.client === undefined;
    this.mode = options.mode ?? 'embedded';
    // The agent's logger (the default one when none is given) and mode, for what logs or names a setting outside the context.
    const made = { ...options, logger: this.logger, mode: this.mode };
    this.capabilities = options.capabilities ?? defaultCapabilities(this.config, made, this.cluster);
    this.reconnectDelaysMs = options.reconnectDelaysMs ?? DEFAULT_RECONNECT_DELAYS_MS;
    this.tokenSource = options.tokenSource ?? 'the configuration given to createListingAgent';
    const late = { logger: this.logger, reportError: (error: unknown) => this.reportError(error) };
    this.checkListeners = () => listenersAtStart(this as unknown as EventEmitter, late, this.config, options);
    if (options.discord !== undefined && options.autoStart !== false) {
      followBot(this, options.discord, this.logger, (error) => this.reportError(error));
    } else if (options.autoStart === true) {
      setImmediate(() => this.start().catch((error: unknown) => this.reportError(error)));
    }
  }

  /**
   * The prom-client registry that `/metrics` serves, with the agent's metrics on it: the `registry`
   * option, else one made at the first read (prom-client is loaded then: an agent with health off
   * that nobody asks never loads it). The metrics are kept from the agent's construction on, read
   * at each scrape.
   */
  get registry(): Registry {
    return (this.registryValue ??= metricsRegistry.get().serveRecordedMetrics(this.recorder.recorded));
  }

  /** Where the agent stands. */
  get phase(): AgentPhase {
    return this.phaseValue;
  }

  /** The health server's base URL once listening (`http://127.0.0.1:9464`). */
  get healthServerUrl(): string | undefined {
    return this.health?.url;
  }

  /**
   * Who leads among the agents sharing `state.redis` (this agent's `agentId`, `isLeader`,
   * `fencingToken`, `leaderId`, and `change` events). Undefined without Redis: the one agent does
   * everything.
   */
  get leadership(): Leadership | undefined {
    return this.cluster?.leadership;
  }

  /**
   * Opens the state store, starts the health server and what needs no service (the vote
   * pipeline, which re-runs the votes a crash left pending, and the webhook receiver: signed
   * votes are recorded and rewarded from here on), then tries the service once. Resolves when
   * that first try is over, reached or not: a service that cannot be reached is retried in the
   * background, and `/readyz` says why and what waits for it (stats, commands, the votes cursor,
   * v0 deliveries). Rejects only when the agent cannot run at all (the store cannot be opened;
   * for the daemon, the health port is taken; a `ConfigError` when votes reach no hook and no
   * `vote` listener), with an error that says what to fix, and leaves the agent idle. With
   * `state.redis`, Redis being down is not such a case: the agent starts, `/readyz` says Redis
   * is down, and the capabilities start when it comes back. Embedded, a
   * health port that is taken is not either: `error` is emitted (a `ListenError` naming
   * `health.listen`), and the agent runs without its health server.
   *
   * Safe to call more than once (an agent given `discord` starts itself): a call while a start is
   * under way shares it; a call after it tries again what did not start (the health server), and
   * after a failed start, the whole start. Rejects once `stop()` was called.
   */
  start(): Promise<void> {
    if (this.stopping !== undefined)
      return Promise.reject(new Error('the agent was already started and stopped: make a new one to start again'));
    if (this.starting === undefined) {
      const refused = this.checkListeners();
      if (refused) return Promise.reject(refused);
      this.startDone = false;
      this.starting = this.doStart().then(
        () => void (this.startDone = true),
        (error: unknown) => {
          this.starting = undefined;
          throw error;
        },
      );
      return this.starting;
    }
    return this.startDone ? (this.health?.start() ?? Promise.resolve()) : this.starting;
  }

  private async doStart(): Promise<void> {
    this.phaseValue = 'starting';
    this.readiness.set('store', false, 'opening');
    this.readiness.set('service', false, 'not reached yet');
    // Loaded at the first start, before anything can stop it halfway.
    const { createBringUp } = await import('./bring-up.js');
    try {
      if (this.cluster) {
        await (await import('./cluster-wiring.js')).connectCluster(this.cluster, {
          readiness: this.readiness,
          metrics: this.metrics,
          logger: this.logger,
          signal: this.aborter.signal,
          onRedisUp: () => this.bringingUp?.redisUp(),
        });
      }
      await this.store.open();
      // A corrupt file set aside, a stale lock taken over: the store goes on, a person should know.
      for (const warning of this.store.warnings?.() ?? []) this.logger.warn({ store: this.store.describe() }, warning);
      this.readiness.set('store', true, this.store.describe());
      this.unwatchWrites = watchStateWrites({ store: this.store, readiness: this.readiness, metrics: this.metrics, logger: this.logger });
      if (this.config.health.enabled) {
        // Loaded only when enabled: an agent with health off (a bot posting stats) loads neither.
        const { config, store, logger, now, readiness, cluster, mode } = this;
        const reads = { phase: () => this.phaseValue, started: () => this.started };
        this.health ??= await (await import('./health-wiring.js')).createAgentHealth({
          config, mode, logger, readiness, reportError: (error) => this.reportError(error),
          // Made (prom-client loaded) at the first scrape of /metrics.
          registry: () => this.registry,
          status: () => ({ events: this, config, store, logger, now, readiness, cluster, mode, metrics: this.recorder.recorded, ...reads }),
        });
        await this.health.start();
      }
      const record = { version: CLIENT_VERSION, startedAt: new Date(this.now()).toISOString() };
      await recordStart(this.store, this.stateKey(), record, this.cluster !== undefined, this.logger);
    } catch (error) {
      // Everything taken is given back: the next start() starts again.
      this.phaseValue = 'idle';
      this.unwatchWrites();
      await this.health?.stop().catch(() => undefined);
      await this.store.close().catch(() => undefined);
      await this.cluster?.connection.close().catch(() => undefined);
      throw error;
    }
    this.phaseValue = 'connecting';
    this.bringingUp = this.bringUp(createBringUp);
    await this.bringingUp.start();
  }

  /** The key of this agent's run record: one per agent when several share the state. */
  private stateKey(): string {
    return this.cluster ? `${STATE_KEY}:${this.cluster.agentId}` : STATE_KEY;
  }

  /** Brings the capabilities up: those that need no service at once, the rest once it answers. */
  private bringUp(createBringUp: typeof import('./bring-up.js').createBringUp): BringUp {
    return createBringUp({
      capabilities: this.capabilities,
      client: this.client,
      cluster: this.cluster,
      logger: this.logger,
      readiness: this.readiness,
      signal: this.aborter.signal,
      delaysMs: this.reconnectDelaysMs,
      tokenSource: this.tokenSource,
      now: this.now,
      context: (project) => this.capabilityContext(project),
      reportError: (error) => this.reportError(error),
      onStarted: (capability) => this.started.push(capability),
      onUndone: (capability) => (this.started = this.started.filter((c) => c !== capability)),
      onRunning: (project) => {
        this.phaseValue = 'running';
        // Only an agent that runs its capabilities competes for the lease.
        this.cluster?.leadership.start();
        const agentId = this.cluster ? { agentId: this.cluster.agentId } : {};
        this.logger.info({ project: project.name, projectId: project.id, ...agentId }, HEADLINES.ready);
        this.emit('ready', { projectId: project.id, projectName: project.name });
      },
    });
  }

  /** The context the capabilities share; `project` once the service answered. */
  private capabilityContext(project: ServiceProject | undefined): CapabilityContext<AgentEvents> {
    return {
      config: this.config,
      ...(project ? { project } : {}),
      client: this.client,
      store: this.store,
      logger: this.logger,
      metrics: this.metrics,
      readiness: this.readiness,
      mode: this.mode,
      now: this.now,
      reportError: (error) => this.reportError(error),
      emit: (event, ...args) => {
        // A listener that throws must not break the capability that emitted.
        try {
          (this.emit as (event: string, ...args: unknown[]) => boolean)(event, ...args);
        } catch (error) {
          this.logger.warn({ event, err: errorMessage(error) }, 'an event listener threw');
        }
      },
      // node's EventEmitter types rawListeners loosely (Function[]): these are the listeners of `event`.
      listeners: (event) => this.rawListeners(event) as never,
    };
  }

  /**
   * Stops gracefully: capabilities finish or checkpoint their work (until `deadlineMs`, default
   * 10 s), the state is flushed, servers close. With `state.redis`, the lease is then released (a
   * standby takes over at its next try) and the Redis connection is closed last. Safe to call more
   * than once. Before any start (a bot destroyed before it was ready), or after a start that
   * failed, nothing is open: the agent is only marked stopped, and nothing is written.
   */
  stop(options: { deadlineMs?: number } = {}): Promise<void> {
    this.stopping ??= this.doStop(options.deadlineMs ?? 10_000);
    return this.stopping;
  }

  private async doStop(deadlineMs: number): Promise<void> {
    const deadline = this.now() + deadlineMs;
    this.phaseValue = 'stopping';
    this.aborter.abort(new Error('the agent is stopping'));
    // A start under way ends first (the abort cuts it short); one never made, or failed (it closed what it opened), left no state open.
    const opened = await (this.starting?.then(() => true, () => false) ?? false);
    this.phaseValue = 'stopping';
    // A try under way finishes first, so that whatever it starts is stopped below.
    await this.bringingUp?.stop(deadline);
    if (this.cluster) {
      // Leader-only work first, then the lease goes at once (a standby takes over at its next try,
      // instead of waiting for the rest of this agent's stop or the lease to expire).
      for (const capability of [...this.started].reverse()) {
        if (!('inner' in capability)) continue;
        await capability.stop(deadline).catch((error: unknown) => this.reportError(error));
        this.readiness.remove(capability.name);
        this.started = this.started.filter((c) => c !== capability);
      }
      await this.votesCapability()?.stopPolling(deadline).catch((error: unknown) => this.reportError(error));
      await this.cluster.leadership.stop().catch((error: unknown) => this.reportError(error));
    }
    for (const capability of this.started.reverse()) {
      await capability.stop(deadline).catch((error: unknown) => this.reportError(error));
      this.readiness.remove(capability.name);
    }
    this.started = [];
    const reportError = (error: unknown) => this.reportError(error);
    if (opened) await closeState({ store: this.store, key: this.stateKey(), now: this.now, logger: this.logger, reportError });
    this.unwatchWrites();
    await this.health?.stop().catch((error: unknown) => this.reportError(error));
    if (this.ownsClient) await this.client.close().catch(() => undefined);
    await this.cluster?.connection.close().catch((error: unknown) => this.reportError(error));
    this.phaseValue = 'stopped';
    this.logger.info('agent stopped');
    this.flushLog();
    this.emit('stopped');
  }

  /**
   * Syncs the slash commands now (`force` sends them even when unchanged). Rejects when
   * `commands.enabled` is off or the agent is not running, and with the sync's error.
   */
  syncCommands(options: { force?: boolean } = {}): Promise<CommandSyncResult> {
    const gate = this.started.find((c): c is LeaderOnlyCapability => c.name === 'commands' && 'inner' in c);
    if (gate && !gate.active) {
      const leader = this.cluster?.leadership.leaderId ?? 'none yet';
      return Promise.reject(new Error(`this agent stands by: the leader (${leader}) syncs the commands`));
    }
    const capability = [gate?.inner, ...this.started].find((c): c is CommandsCapability => c?.name === 'commands' && 'syncNow' in c);
    if (!capability) {
      if (this.phaseValue === 'running') return Promise.reject(new Error('commands sync is off: set commands.enabled'));
      return Promise.reject(new Error(`the agent is ${this.phaseValue}, not running`));
    }
    return capability.syncNow(options);
  }

  /**
   * The vote pipeline while the votes capability runs (`votes.enabled`), for a second road to
   * feed (the webhook receiver): `ingest(votes, 'webhook')`. Undefined otherwise (with only
   * `webhooks.enabled`, the receiver's pipeline is its own business).
   */
  get votePipeline(): VotePipeline | undefined {
    return this.config.votes.enabled ? this.votesCapability()?.pipeline : undefined;
  }

  /**
   * Whether the user has an active vote, through `GET /projects/@me/votes/:user_id`. A "yes" is
   * cached until the vote's `expires_at`, a "no" for 30 s. Works whether or not `votes.enabled`.
   * @param query `source: 'discord'` when `userId` is a Discord ID; default the service's own IDs.
   */
  async hasVoted(userId: string, query: HasVotedQuery = {}): Promise<boolean> {
    this.voteCheck ??= import('../votes/has-voted.js').then(({ createHasVoted }) => createHasVoted({ client: this.client, now: this.now }));
    return (await this.voteCheck).hasVoted(userId, query);
  }

  /** The webhook receiver's URL while it listens (`webhooks.enabled`), else undefined. */
  get webhookReceiverUrl(): string | undefined {
    return this.started.find((c): c is WebhooksCapability => c.name === 'webhooks' && 'url' in c)?.url;
  }

  private votesCapability(): VotesCapability | undefined {
    return this.started.find((c): c is VotesCapability => c.name === 'votes' && 'pollNow' in c);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }

  /** Emits `error` when someone listens (an EventEmitter would throw otherwise); always logs at debug. */
  private reportError(error: unknown): void {
    const err = error instanceof Error ? error : new Error(String(error));
    this.logger.debug({ err: err.message }, 'agent error');
    if (this.listenerCount('error') > 0) this.emit('error', err);
  }
}

/** Creates the agent (not started). Throws `ConfigError` (reason `invalid`) listing every problem of the configuration. */
export function createListingAgent(options: ListingAgentOptions): ListingAgent {
  return new ListingAgent(options);
}
