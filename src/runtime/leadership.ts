import type { EventEmitter } from 'node:events';

/**
 * Events of a {@link Leadership}: `change` when this agent starts or stops leading, `leader` when
 * the leader it sees changes (its own ID while it leads; undefined when it sees none).
 */
export interface LeadershipEvents {
  change: [leading: boolean];
  leader: [leaderId: string | undefined];
}

/**
 * Who leads among the agents sharing one Redis. The leader alone posts stats, syncs commands and
 * polls votes; every agent receives webhooks. With no Redis there is one agent, and it leads.
 */
export interface Leadership extends EventEmitter<LeadershipEvents> {
  /** This agent's ID (`state.redis.agentId`, default `<hostname>/<pid>`). */
  readonly agentId: string;
  /** True while this agent holds the lease (and believes it has not expired by its own clock). */
  readonly isLeader: boolean;
  /** The fencing token of the lease this agent holds; undefined when it does not lead. */
  readonly fencingToken: number | undefined;
  /** The leader's agent ID as last seen (this agent's when it leads); undefined when unknown. */
  readonly leaderId: string | undefined;
}

/** `standing by (leader: <id>)`, the readiness detail of leader-only work on a standby. */
export function standingByDetail(leaderId: string | undefined): string {
  return `standing by (leader: ${leaderId ?? 'none yet'})`;
}
