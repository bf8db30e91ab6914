import type { ListingClient } from '../api/client.js';
import type { AgentCluster } from './cluster.js';
import type { Capability, CapabilityContext, ServiceProject } from '../runtime/capability.js';
import type { AgentLogger } from '../log/agent-logger.js';
import type { Readiness } from '../runtime/readiness.js';
import { createServiceLog } from './service-log.js';
import { startInOrder, type StartHooks } from './start-capabilities.js';
import { settleWithin } from '../runtime/settle.js';
import { errorMessage, ListingAgentError } from '../errors.js';
import { timerDelay } from '../contract/timer-delay.js';

/** What {@link createBringUp} works with: the agent's parts. */
export interface BringUpOptions {
  /** Every capability, in the order they start. */
  capabilities: readonly Capability[];
  client: ListingClient;
  /** With `state.redis`: every capability keeps its state in Redis, so none starts while it is down. */
  cluster: AgentCluster | undefined;
  logger: AgentLogger;
  readiness: Readiness;
  /** Aborted when the agent stops (cuts a project lookup in flight). */
  signal: AbortSignal;
  /** Waits between tries, the last one repeated. */
  delaysMs: readonly number[];
  /** Where `service.token` comes from, in words, for the message when the service refuses it. */
  tokenSource: string;
  now(): number;
  /** The context capabilities start with (`project` undefined for those that start before the service). */
  context(project: ServiceProject | undefined): CapabilityContext;
  reportError(error: unknown): void;
  /** A capability has started (so that a stop stops it). */
  onStarted(capability: Capability): void;
  /** A capability was stopped again after a later one failed to start. */
  onUndone(capability: Capability): void;
  /** The service answered and every capability runs. */
  onRunning(project: ServiceProject): void;
}

/** The tries that bring an agent's capabilities up (see {@link createBringUp}). */
export interface BringUp {
  /** Runs the first try; resolves when it is over (everything up, or the next try scheduled). */
  start(): Promise<void>;
  /** Redis came (back) up: when a try waits for it, it runs now. */
  redisUp(): void;
  /** No more tries; resolves once a try under way is over, or at `deadline` (epoch ms). */
  stop(deadline: number): Promise<void>;
}

/** What the tries work with and where they stand. */
interface BringUpState {
  readonly options: BringUpOptions;
  /** Capabilities that start before the service answers (`startsBeforeService`). */
  readonly early: readonly Capability[];
  /** The others: they start once `GET /projects/@me` answered. */
  readonly late: readonly Capability[];
  readonly serviceLog: ReturnType<typeof createServiceLog>;
  readonly hooks: StartHooks;
  earlyUp: boolean;
  project: ServiceProject | undefined;
  /** Whether the early capabilities heard that the service answered. */
  told: boolean;
  stopped: boolean;
  timer: NodeJS.Timeout | undefined;
  /** The try to run when Redis comes back, while one waits for it. */
  onRedisUp: (() => void) | undefined;
  current: Promise<void> | undefined;
}

function redisDown({ options }: BringUpState): boolean {
  return options.cluster !== undefined && !options.cluster.connection.isUp;
}

function redisWait({ options }: BringUpState): string {
  return `waits for Redis (${options.cluster?.connection.describe() ?? 'Redis'} is down)`;
}

function markWaiting(state: BringUpState, capabilities: readonly Capability[], detail: string): void {
  for (const capability of capabilities) state.options.readiness.set(capability.name, false, detail);
}

/** A start that failed: whether it was Redis (retry when it is back). Logged once per kind of failure. */
function startFailed(state: BringUpState, group: readonly Capability[], error: unknown, retryInMs: number): boolean {
  const { cluster, reportError } = state.options;
  reportError(error);
  // A RedisUnavailableError, known by its code: an agent without Redis never loads redis/connection.
  if (cluster && ((error instanceof ListingAgentError && error.code === 'redis_unavailable') || !cluster.connection.isUp)) return true;
  state.serviceLog.startFailed(group.map((c) => c.name).join(' and '), errorMessage(error), retryInMs);
  return false;
}

/** Starts the early group unless it runs; returns whether it waits for Redis. */
async function startEarly(state: BringUpState, retryInMs: number): Promise<boolean> {
  if (state.earlyUp) return false;
  if (redisDown(state)) {
    markWaiting(state, state.early, redisWait(state));
    return true;
  }
  try {
    await startInOrder(state.early, state.options.context(undefined), state.hooks);
    state.earlyUp = true;
    return false;
  } catch (error) {
    return startFailed(state, state.early, error, retryInMs);
  }
}

async function lookUpProject(state: BringUpState, tries: number, retryInMs: number): Promise<void> {
  const { client, readiness, signal, reportError } = state.options;
  if (state.project !== undefined) return;
  try {
    const found = await client.projects.get(undefined, { signal });
    state.project = { id: found.id, name: found.name, platform: found.platform, type: found.type };
    readiness.set('service', true, `project ${found.name} (${found.id})`);
    state.serviceLog.reached(state.project);
  } catch (error) {
    if (signal.aborted) return;
    const reason = errorMessage(error);
    readiness.set('service', false, reason);
    state.serviceLog.failed(error, tries, retryInMs);
    reportError(error);
    if (state.earlyUp) for (const capability of state.early) capability.serviceWaiting?.(reason);
    markWaiting(state, state.late, `waits for the service (${reason})`);
  }
}

/** Starts the late group once the service answered; returns whether it waits for Redis, or 'running'. */
async function startLate(state: BringUpState, project: ServiceProject, retryInMs: number): Promise<boolean | 'running'> {
  if (redisDown(state)) {
    markWaiting(state, state.late, redisWait(state));
    return true;
  }
  try {
    await startInOrder(state.late, state.options.context(project), state.hooks);
    state.options.onRunning(project);
    return 'running';
  } catch (error) {
    return startFailed(state, state.late, error, retryInMs);
  }
}

/** One try: what is still missing, in order. */
async function attempt(state: BringUpState, tries: number): Promise<void> {
  const { delaysMs, signal, reportError } = state.options;
  state.onRedisUp = undefined;
  const retryInMs = delaysMs[Math.min(tries - 1, delaysMs.length - 1)] ?? 60_000;
  let waitsForRedis = await startEarly(state, retryInMs);
  await lookUpProject(state, tries, retryInMs);
  if (state.stopped || signal.aborted) return;
  const { project } = state;
  if (project !== undefined && state.earlyUp && !state.told) {
    state.told = true;
    for (const capability of state.early) await capability.serviceReached?.(project).catch((error: unknown) => reportError(error));
  }
  if (project !== undefined && state.earlyUp) {
    const late = await startLate(state, project, retryInMs);
    if (late === 'running') return;
    waitsForRedis = late || waitsForRedis;
  }
  if (state.stopped) return;
  schedule(state, tries, retryInMs, waitsForRedis);
}

function schedule(state: BringUpState, tries: number, delayMs: number, waitsForRedis: boolean): void {
  const { cluster } = state.options;
  const next = () => {
    clearTimeout(state.timer);
    state.onRedisUp = undefined;
    void run(state, tries + 1);
  };
  if (waitsForRedis && cluster) {
    state.serviceLog.waitingForRedis(cluster.connection.describe(), delayMs);
    state.onRedisUp = next;
    // Back already (between the failure and now): no 'up' will come, so try again soon.
    if (cluster.connection.isUp) delayMs = Math.min(delayMs, 100);
  }
  state.timer = setTimeout(next, timerDelay(delayMs));
  state.timer.unref();
}

function run(state: BringUpState, tries: number): Promise<void> {
  if (state.stopped) return Promise.resolve();
  const running: Promise<void> = attempt(state, tries)
    .catch((error: unknown) => state.options.reportError(error))
    .finally(() => {
      if (state.current === running) state.current = undefined;
    });
  state.current = running;
  return running;
}

/**
 * Brings the capabilities up, in two groups. Those that start before the service (the vote
 * pipeline, which re-runs the votes a crash left pending, and the webhook receiver) need only the
 * state (and Redis with `state.redis`): they start at the first try. The others (stats, commands)
 * and what the first group keeps for later (the cursor poller, v0 routing) need the service:
 * they start once `GET /projects/@me` answers. Each try does what is still missing; after a
 * failure the next comes after the next of `delaysMs` (unref'd: the library never holds a
 * process open), or at once when Redis, which it waited for, comes back. `/readyz` says what
 * waits and why: `service` has the lookup's failure, each capability not started yet what it
 * waits for.
 */
export function createBringUp(options: BringUpOptions): BringUp {
  const { readiness } = options;
  const early = options.capabilities.filter((c) => c.startsBeforeService === true);
  const state: BringUpState = {
    options,
    early,
    late: options.capabilities.filter((c) => c.startsBeforeService !== true),
    serviceLog: createServiceLog(options.logger, options.tokenSource),
    hooks: {
      mark: (name: string, ready: boolean, detail: string) => void readiness.set(name, ready, detail),
      forget: (name: string) => readiness.remove(name),
      onStarted: options.onStarted,
      onUndone: options.onUndone,
      reportError: options.reportError,
      now: options.now,
    },
    earlyUp: early.length === 0,
    project: undefined,
    told: false,
    stopped: false,
    timer: undefined,
    onRedisUp: undefined,
    current: undefined,
  };
  return {
    start: () => run(state, 1),
    redisUp() {
      if (state.current === undefined) state.onRedisUp?.();
    },
    async stop(deadline) {
      state.stopped = true;
      clearTimeout(state.timer);
      state.onRedisUp = undefined;
      if (state.current === undefined) return;
      await settleWithin(state.current, deadline - options.now());
    },
  };
}
