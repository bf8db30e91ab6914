import type { CommandsEvents } from '../commands/types.js';
import type { StatsEvents } from '../stats/events.js';
import type { VotesEvents } from '../votes/types.js';
import type { ComponentState } from '../runtime/readiness.js';

/**
 * The agent's events, as named tuples: its own, and those of every capability (`posted`,
 * `commandsSynced`, `vote`, ...), which each capability declares beside its code.
 * `error` never stops the agent; with no listener it is only logged.
 */
export interface AgentEvents extends StatsEvents, CommandsEvents, VotesEvents {
  /** The agent reached the service and started every enabled capability. */
  ready: [info: { projectId: string; projectName: string }];
  /** Something failed; the agent logs, retries or refuses, and keeps running. */
  error: [error: Error];
  /** A component became ready or not ready. */
  readiness: [component: string, state: ComponentState];
  /** `stop()` finished: state flushed, servers closed. */
  stopped: [];
}
