/**
 * Which Redis server a connection is on, read from `ROLE` and `INFO server` each time it connects
 * (and after a `READONLY` reply): a primary it can use, a replica it cannot write to, or a
 * Sentinel, which holds no data at all. Pure: the replies come in, a {@link RedisServer} goes out.
 */

/** What a server is to the agent: `primary` (writable), `replica` (read-only), `sentinel` (no data). */
export type RedisServerRole = 'primary' | 'replica' | 'sentinel';

/** The server a connection is on, as its last check found it. */
export interface RedisServer {
  /** `run_id` of `INFO server`: another one after every restart, and on another server after a failover. */
  readonly runId: string;
  /** What `ROLE` answers, in the agent's words. */
  readonly role: RedisServerRole;
  /** `host:port` as the agent reached it. */
  readonly address: string;
  /** `redis_version` of `INFO server`. */
  readonly version: string | undefined;
  /** A replica's primary (`host:port`, as the replica names it). */
  readonly primary?: string;
  /** A Sentinel's monitored primaries (their names). */
  readonly monitors?: readonly string[];
}

/** One `field:value` of an `INFO` section (`INFO server`, `INFO replication`). */
export function infoField(info: string, field: string): string | undefined {
  return new RegExp(`^${field}:(.*?)\\r?$`, 'm').exec(info)?.[1];
}

const text = (value: unknown): string => (value instanceof Uint8Array ? Buffer.from(value).toString() : String(value));

/**
 * The server `ROLE` and `INFO server` describe, reached at `address`; undefined when the role is
 * not one Redis answers (a proxy that speaks the protocol but is no Redis).
 */
export function serverFrom(roleReply: unknown, info: string, address: string): RedisServer | undefined {
  if (!Array.isArray(roleReply) || roleReply.length === 0) return undefined;
  const word = text(roleReply[0]);
  const base = { runId: infoField(info, 'run_id') ?? '', address, version: infoField(info, 'redis_version') };
  if (word === 'master') return { ...base, role: 'primary' };
  if (word === 'slave') return { ...base, role: 'replica', primary: `${text(roleReply[1])}:${text(roleReply[2])}` };
  if (word === 'sentinel') {
    const names = Array.isArray(roleReply[1]) ? roleReply[1].map(text) : [];
    return { ...base, role: 'sentinel', monitors: names };
  }
  return undefined;
}

/** Whether two readings are the same server in the same role (a restart or a failover is not). */
export function sameServer(a: RedisServer | undefined, b: RedisServer | undefined): boolean {
  return a !== undefined && b !== undefined && a.runId === b.runId && a.role === b.role && a.address === b.address;
}

/** `a replica (read-only) of 10.0.0.1:6379` and the like, for messages. */
export function describeServer(server: RedisServer): string {
  if (server.role === 'replica') return `${server.address}, a replica (read-only) of ${server.primary ?? 'another server'}`;
  if (server.role === 'sentinel') {
    const monitors = server.monitors ?? [];
    return `${server.address}, a Sentinel${monitors.length > 0 ? ` (it monitors ${monitors.join(', ')})` : ''}`;
  }
  return `${server.address}, the primary`;
}
