import type { ListingClient } from '../api/client.js';
import type { AgentCluster } from './cluster.js';
import { RedisUnavailableError } from '../redis/connection.js';
import type { Capability, CapabilityContext, ServiceProject } from '../runtime/capability.js';
import type { AgentLogger } from '../log/agent-logger.js';
import type { Readiness } from '../runtime/readiness.js';
import { createServiceLog } from './service-log.js';
import { startInOrder } from './start-capabilities.js';

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
  const { client, cluster, logger, readiness, signal } = options;
  const early = options.capabilities.filter((c) => c.startsBeforeService === true);
  const late = options.capabilities.filter((c) => c.startsBeforeService !== true);
  const serviceLog = createServiceLog(logger, options.tokenSource);
  let earlyUp = early.length === 0;
  let project: ServiceProject | undefined;
  /** Whether the early capabilities heard that the service answered. */
  let told = false;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  /** The try to run when Redis comes back, while one waits for it. */
  let onRedisUp: (() => void) | undefined;
  let current: Promise<void> | undefined;

  const hooks = {
    mark: (name: string, ready: boolean, detail: string) => void readiness.set(name, ready, detail),
    forget: (name: string) => readiness.remove(name),
    onStarted: options.onStarted,
    onUndone: options.onUndone,
    reportError: options.reportError,
    now: options.now,
  };
  const redisDown = () => cluster !== undefined && !cluster.connection.isUp;
  const redisWait = () => `waits for Redis (${cluster?.connection.describe() ?? 'Redis'} is down)`;
  const markWaiting = (capabilities: readonly Capability[], detail: string) => {
    for (const capability of capabilities) readiness.set(capability.name, false, detail);
  };
  const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error));

  /** A start that failed: whether it was Redis (retry when it is back). Logged once per kind of failure. */
  function startFailed(group: string, error: unknown, retryInMs: number): boolean {
    options.reportError(error);
    if (cluster && (error instanceof RedisUnavailableError || !cluster.connection.isUp)) return true;
    serviceLog.startFailed(group, errorText(error), retryInMs);
    return false;
  }

  async function startEarly(retryInMs: number): Promise<boolean> {
    if (earlyUp) return false;
    if (redisDown()) {
      markWaiting(early, redisWait());
      return true;
    }
    try {
      await startInOrder(early, options.context(undefined), hooks);
      earlyUp = true;
      return false;
    } catch (error) {
      return startFailed(early.map((c) => c.name).join(' and '), error, retryInMs);
    }
  }

  async function lookUpProject(tries: number, retryInMs: number): Promise<void> {
    if (project !== undefined) return;
    try {
      const found = await client.projects.get(undefined, { signal });
      project = { id: found.id, name: found.name, platform: found.platform, type: found.type };
      readiness.set('service', true, `project ${found.name} (${found.id})`);
      serviceLog.reached(project);
    } catch (error) {
      if (signal.aborted) return;
      const reason = errorText(error);
      readiness.set('service', false, reason);
      serviceLog.failed(error, tries, retryInMs);
      options.reportError(error);
      if (earlyUp) for (const capability of early) capability.serviceWaiting?.(reason);
      markWaiting(late, `waits for the service (${reason})`);
    }
  }

  /** One try: what is still missing, in order. */
  async function attempt(tries: number): Promise<void> {
    onRedisUp = undefined;
    const retryInMs = options.delaysMs[Math.min(tries - 1, options.delaysMs.length - 1)] ?? 60_000;
    let waitsForRedis = await startEarly(retryInMs);
    await lookUpProject(tries, retryInMs);
    if (stopped || signal.aborted) return;
    if (project !== undefined && earlyUp && !told) {
      told = true;
      for (const capability of early) await capability.serviceReached?.(project).catch((error: unknown) => options.reportError(error));
    }
    if (project !== undefined && earlyUp) {
      if (redisDown()) {
        markWaiting(late, redisWait());
        waitsForRedis = true;
      } else {
        try {
          await startInOrder(late, options.context(project), hooks);
          options.onRunning(project);
          return;
        } catch (error) {
          waitsForRedis = startFailed(late.map((c) => c.name).join(' and '), error, retryInMs) || waitsForRedis;
        }
      }
    }
    if (stopped) return;
    schedule(tries, retryInMs, waitsForRedis);
  }

  function schedule(tries: number, delayMs: number, waitsForRedis: boolean): void {
    const next = () => {
      clearTimeout(timer);
      onRedisUp = undefined;
      run(tries + 1);
    };
    if (waitsForRedis && cluster) {
      serviceLog.waitingForRedis(cluster.connection.describe(), delayMs);
      onRedisUp = next;
      // Back already (between the failure and now): no 'up' will come, so try again soon.
      if (cluster.connection.isUp) delayMs = Math.min(delayMs, 100);
    }
    timer = setTimeout(next, delayMs);
    timer.unref();
  }

  function run(tries: number): Promise<void> {
    if (stopped) return Promise.resolve();
    const running: Promise<void> = attempt(tries)
      .catch((error: unknown) => options.reportError(error))
      .finally(() => {
        if (current === running) current = undefined;
      });
    current = running;
    return running;
  }

  return {
    start: () => run(1),
    redisUp() {
      if (current === undefined) onRedisUp?.();
    },
    async stop(deadline) {
      stopped = true;
      clearTimeout(timer);
      onRedisUp = undefined;
      if (current === undefined) return;
      let wait: NodeJS.Timeout | undefined;
      await Promise.race([current, new Promise((resolve) => (wait = setTimeout(resolve, Math.max(0, deadline - options.now()))).unref())]);
      clearTimeout(wait);
    },
  };
}
