import type { ListingClient } from '../api/client.js';
import type { ListingAgentConfig } from '../config/schema.js';
import type { AgentMetrics } from '../health/metrics.js';
import type { StateStore } from '../store/types.js';
import type { AgentEvents } from './events.js';
import type { AgentLogger } from './logger.js';
import type { Readiness } from './readiness.js';

/** What a capability gets from the agent when it starts. */
export interface CapabilityContext {
  config: ListingAgentConfig;
  client: ListingClient;
  store: StateStore;
  logger: AgentLogger;
  metrics: AgentMetrics;
  readiness: Readiness;
  /**
   * The project the agent reached the service as (`GET /projects/@me`). Optional: a context made
   * outside the agent (a test) may leave it out. The webhook receiver files v0 votes under it.
   */
  project?: { id: string; name: string; platform?: string; type?: string };
  /** Current time in epoch ms (injected in tests). */
  now(): number;
  /** Reports an error without stopping the agent (logged, and emitted as `error`). */
  reportError(error: unknown): void;
  /** Emits one of the agent's events (`posted`, `postFailed`, ...). */
  emit<K extends Exclude<keyof AgentEvents, 'error'>>(event: K, ...args: AgentEvents[K]): void;
  /**
   * The agent's current listeners of `event`, as `rawListeners` gives them (a `once` listener as
   * its wrapper, so calling it removes it). Read at each use: listeners added later count. The
   * votes capability calls the `vote` listeners as its in-process hook. Optional: a context made
   * outside the agent (a test) may leave it out, and then there are none.
   */
  listeners?<K extends keyof AgentEvents>(event: K): readonly ((...args: AgentEvents[K]) => unknown)[];
}

/**
 * One thing the agent does (stats, commands, votes, webhooks): started after the agent reached
 * the service, stopped before the store is flushed.
 */
export interface Capability {
  /** Short name: the readiness component and the log binding. */
  readonly name: string;
  start(context: CapabilityContext): Promise<void>;
  /** Finishes or checkpoints in-flight work; must resolve before `deadline` (epoch ms). */
  stop(deadline: number): Promise<void>;
}
