import type { CommandSyncFailure, CommandSyncResult } from '../commands/types.js';
import type { PostFailure, PostResult } from '../stats/events.js';
import type { DeadLetter, Vote } from '../votes/types.js';
import type { ComponentState } from './readiness.js';

/**
 * The agent's events, as named tuples. Later capabilities add theirs here (`posted`, `vote`, ...).
 * `error` never stops the agent; with no listener it is only logged.
 */
export interface AgentEvents {
  /** The agent reached the service and started every enabled capability. */
  ready: [info: { projectId: string; projectName: string }];
  /** Something failed; the agent logs, retries or refuses, and keeps running. */
  error: [error: Error];
  /** A component became ready or not ready. */
  readiness: [component: string, state: ComponentState];
  /** `stop()` finished: state flushed, servers closed. */
  stopped: [];
  /** Counts were posted (v1 metrics, a v1 batch, or v0 stats). */
  posted: [result: PostResult];
  /** A post failed; the samples are kept and retried. */
  postFailed: [failure: PostFailure];
  /** The command set was checked: synced, or skipped because it had not changed. */
  commandsSynced: [result: CommandSyncResult];
  /** A command sync failed (the source, local validation, or the service). */
  commandsSyncFailed: [failure: CommandSyncFailure];
  /**
   * A new vote (embedded mode's in-process hook). Listeners may be async: the agent awaits them,
   * and a rejection is a hook failure, retried and dead-lettered like any hook.
   */
  vote: [vote: Vote];
  /** A vote was recorded durably (before any hook ran). */
  voteReceived: [vote: Vote];
  /** A hook gave up on a vote after its retries; `listing-agent votes failed` lists it. */
  voteDeadLettered: [letter: DeadLetter];
}
