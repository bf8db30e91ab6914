import type { ListingClient } from '../api/client.js';
import type { ListingAgentConfig } from '../config/schema.js';
import type { AgentMetrics } from './metrics.js';
import type { StateStore } from '../store/types.js';
import type { AgentLogger } from '../log/agent-logger.js';
import type { Readiness } from './readiness.js';

/** The project the agent reached the service as (`GET /projects/@me`). */
export interface ServiceProject {
  id: string;
  name: string;
  platform?: string;
  type?: string;
}

/**
 * Events as named tuples (`{ posted: [result: PostResult] }`). Each capability declares the events
 * it emits; the agent's event map is theirs together (`AgentEvents`), so this layer names none.
 */
export type EventMap<Events = Record<string, unknown[]>> = { [K in keyof Events]: unknown[] };

/**
 * What a capability gets from the agent when it starts. `Events` are the events it emits (and
 * whose listeners it may read): its own map, which the agent's includes.
 */
export interface CapabilityContext<Events extends EventMap<Events> = EventMap> {
  config: ListingAgentConfig;
  client: ListingClient;
  store: StateStore;
  logger: AgentLogger;
  metrics: AgentMetrics;
  readiness: Readiness;
  /**
   * The project the agent reached the service as (`GET /projects/@me`). Absent for a capability
   * that starts before the service answered ({@link Capability.startsBeforeService}: it hears of
   * the project through `serviceReached`), and in a context made outside the agent (a test).
   */
  project?: ServiceProject;
  /**
   * How the agent runs: its messages name a setting in that voice (config/setting-names.ts:
   * `health.listen` embedded, `health.listen (LISTING_AGENT_HEALTH_LISTEN)` for the daemon).
   * Absent in a context made outside the agent (a test): the daemon's voice.
   */
  mode?: 'embedded' | 'daemon';
  /** Current time in epoch ms (injected in tests). */
  now(): number;
  /** Reports an error without stopping the agent (logged, and emitted as `error`). */
  reportError(error: unknown): void;
  /** Emits one of the capability's events (`posted`, `postFailed`, ...) as the agent's. */
  emit<K extends keyof Events & string>(event: K, ...args: Events[K]): void;
  /**
   * The agent's current listeners of `event`, as `rawListeners` gives them (a `once` listener as
   * its wrapper, so calling it removes it). Read at each use: listeners added later count. The
   * votes capability calls the `vote` listeners as its in-process hook. Optional: a context made
   * outside the agent (a test) may leave it out, and then there are none.
   */
  listeners?<K extends keyof Events & string>(event: K): readonly ((...args: Events[K]) => unknown)[];
}

/**
 * The project's platform and type when the context already has them (the agent hands over the
 * whole `GET /projects/@me` answer), read structurally, since a context made outside the agent (a
 * test, an older agent) may give only the ID and name; then undefined, and the capability asks
 * `@me` itself.
 */
export function knownProjectKind(context: Pick<CapabilityContext, 'project'>): { platform: string; type: string } | undefined {
  const project = context.project as { platform?: unknown; type?: unknown } | undefined;
  return typeof project?.platform === 'string' && typeof project.type === 'string'
    ? { platform: project.platform, type: project.type }
    : undefined;
}

/**
 * One thing the agent does (stats, commands, votes, webhooks): started once the agent reached the
 * service (or, with `startsBeforeService`, at the agent's start), stopped before the store is
 * flushed. `start()` after `stop()` must work, any number of times: a leader that steps down and
 * leads again starts the same capability anew (a fresh run, no timer or listener of the run before).
 */
export interface Capability<Events extends EventMap<Events> = EventMap> {
  /** Short name: the readiness component and the log binding. */
  readonly name: string;
  /**
   * Starts with the agent, before the service answered `GET /projects/@me`: what needs only the
   * local state and secrets (the vote pipeline, the webhook receiver: a signed delivery is
   * verified with the secret alone). The agent then calls `serviceWaiting` after each failed try
   * and `serviceReached` once it answered. Default false: started once the service answered,
   * with `context.project` set.
   */
  readonly startsBeforeService?: boolean;
  start(context: CapabilityContext<Events>): Promise<void>;
  /** For one that starts before the service: the service did not answer yet, and why (for its readiness detail). */
  serviceWaiting?(reason: string): void;
  /** For one that starts before the service: the service answered; start what needed it. Called once per start, after `start`. */
  serviceReached?(project: ServiceProject): Promise<void>;
  /** Finishes or checkpoints in-flight work; must resolve before `deadline` (epoch ms). */
  stop(deadline: number): Promise<void>;
}
