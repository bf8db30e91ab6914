import type { EventEmitter } from 'node:events';
import type { RedisClientType } from '@redis/client';
import type { AgentLogger } from '../log/agent-logger.js';
import { errorMessage, ListingAgentError } from '../errors.js';
import type { RedisServer } from './server.js';

/*
 * The shape of the agent's connection to Redis (connection.ts makes one): its options, events and
 * errors, apart from the code so that the parts it is made of (links.ts, connection-state.ts) can
 * name them.
 */

/** TLS to Redis (or to the Sentinels). */
export interface RedisTlsOptions {
  /** Use TLS. Default: on for a `rediss://` URL, else off. */
  enabled?: boolean | undefined;
  /** A PEM file of the CA that signed the server's certificate (default: the system's CAs). */
  caFile?: string | undefined;
  /** The name the server's certificate must carry; default: the host connected to. */
  serverName?: string | undefined;
}

/** The Sentinels that name the primary (`sentinel` of {@link RedisConnectionOptions}). */
export interface RedisSentinelOptions {
  /** The name the Sentinels monitor the primary by (`sentinel monitor <name> ...`). */
  masterName: string;
  /** Some of the Sentinels (three is plenty): the client asks them for the primary and learns the others from them. */
  nodes: readonly { host: string; port: number }[];
  /** The Sentinels' own user (Sentinel's ACL), when they ask for one. */
  username?: string | undefined;
  /** The Sentinels' own password (`requirepass` in sentinel.conf), when they ask for one. */
  password?: string | undefined;
  /** TLS to the Sentinels. Default: as `tls` (the data servers'). */
  tls?: RedisTlsOptions | undefined;
}

/** The nodes of a Redis Cluster (`cluster` of {@link RedisConnectionOptions}). */
export interface RedisClusterNodes {
  /** Some of the cluster's nodes (primaries or replicas, three is plenty): the client learns the others and the slots from them. */
  nodes: readonly { host: string; port: number }[];
}

/** Options of `createRedisConnection`: exactly one of `url`, `sentinel` and `cluster`. */
export interface RedisConnectionOptions {
  /** One server: `redis://[user:password@]host:port[/db]`, or `rediss://` for TLS. */
  url?: string | undefined;
  /** A primary and its replicas watched by Sentinels: the connection follows the primary across a failover. */
  sentinel?: RedisSentinelOptions | undefined;
  /**
   * A Redis Cluster: every key goes under one hash tag made of `prefix` (`{listing-agent}:...`),
   * so that all of them live in one slot, and every command goes to the primary that holds it.
   */
  cluster?: RedisClusterNodes | undefined;
  /** With `sentinel` or `cluster`: the data servers' user (with `url`, the URL carries it). */
  username?: string | undefined;
  /** With `sentinel` or `cluster`: the data servers' password (with `url`, the URL carries it). */
  password?: string | undefined;
  /** Prefix of every key (`state.redis.prefix`). Default `listing-agent:`; with `cluster`, as a hash tag (`{listing-agent}:`). */
  prefix?: string | undefined;
  /** TLS to the data servers: default on for `rediss://`; `caFile` a PEM of the CA; `serverName` the certificate's name. */
  tls?: RedisTlsOptions | undefined;
  /**
   * Replicas that must have a write before the agent takes it as done (`WAIT`): a webhook vote
   * answered 2xx, the cursor's checkpoint, a hook's completion, a fencing token. Default: 1 when
   * the primary has a replica (`INFO replication`), else 0 (nothing to confirm on).
   */
  replicas?: number | undefined;
  /** How long a write may wait for its replicas (`WAIT`'s timeout) before it is refused. Default 1 000 ms. */
  confirmTimeoutMs?: number | undefined;
  /** Time for one connection attempt. Default 5 000 ms. */
  connectTimeoutMs?: number;
  /** Time for one command before it fails (a hung Redis must not hang the agent). Default 2 000 ms. */
  commandTimeoutMs?: number;
  /** Waits between reconnection attempts (the last one repeats). Default 100, 250, 500, 1 000, 2 000 ms. */
  reconnectDelaysMs?: readonly number[];
  /** The name Redis shows for this client (`CLIENT LIST`). Default `listing-agent`. */
  clientName?: string;
  logger?: AgentLogger;
}

/** The defaults of {@link RedisConnectionOptions}. */
export const REDIS_CONNECTION_DEFAULTS = {
  prefix: 'listing-agent:',
  connectTimeoutMs: 5_000,
  commandTimeoutMs: 2_000,
  confirmTimeoutMs: 1_000,
  reconnectDelaysMs: [100, 250, 500, 1_000, 2_000] as readonly number[],
  clientName: 'listing-agent',
} as const;

/**
 * The client type the connection exposes (no modules; the client's default protocol, RESP3 in
 * @redis/client 6). With `sentinel`, the same command methods, sent to the primary the Sentinels
 * name (connection-level methods such as `connect`, `duplicate` or `select` are not for use).
 */
export type RedisClient = RedisClientType;

/**
 * Events of a {@link RedisConnection}: `up` when it can be used (connected to a primary), `down`
 * with the reason when it stops being usable, or finds itself on a server it cannot use (a
 * replica, a Sentinel), `server` when it finds itself on another server than before (a
 * restart, a failover: another `run_id` or role), and `refusing` when its writes start being
 * refused because the replicas asked for do not confirm them (the reason; undefined once one is
 * confirmed again, or on another server): up, but no write is taken as done.
 */
export interface RedisConnectionEvents {
  up: [];
  down: [reason: string];
  server: [server: RedisServer];
  refusing: [reason: string | undefined];
}

/** A Lua script run by SHA, loaded again when Redis forgot it (a restart, `SCRIPT FLUSH`). */
export interface RedisScript {
  run(keys: readonly string[], args: readonly (string | number)[]): Promise<unknown>;
}

/** The agent's connection to Redis. */
export interface RedisConnection extends EventEmitter<RedisConnectionEvents> {
  /** The official client, connected or reconnecting. Commands fail at once while it is down. */
  readonly client: RedisClient;
  /** The key prefix, `listing-agent:` by default; on a Redis Cluster with its hash tag, `{listing-agent}:`. */
  readonly prefix: string;
  /** `prefix + parts.join(':')`. */
  key(...parts: string[]): string;
  /** True while connected to a primary (a server that takes writes): not on a replica, nor while reconnecting. */
  readonly isUp: boolean;
  /** Why it is not usable (the last error, or the server it is on), or undefined while up. */
  readonly downReason: string | undefined;
  /** The server it is connected to now, as its check found it (`ROLE`, `INFO server`); undefined while not connected. */
  readonly server: RedisServer | undefined;
  /**
   * Whether the server may have changed since `seen` (an earlier `server`): false only while the
   * connection is up on that same server (a reconnect to it is no change), with no other in
   * between. Whoever acts on what it read from Redis (a lease) asks this before acting again.
   */
  serverChangedSince(seen: RedisServer | undefined): boolean;
  /** Starts connecting in the background (reconnecting forever); safe to call more than once, and after `close()`. */
  start(): void;
  /**
   * Resolves once up (at once when up); rejects after `timeoutMs` or when `signal` aborts, and at
   * once with a {@link RedisServerError} when the server is one the agent cannot use at all.
   */
  whenUp(options?: { timeoutMs?: number; signal?: AbortSignal }): Promise<void>;
  /**
   * Resolves once the replicas asked for (`replicas`) have every write this connection made so
   * far (`WAIT`, within `confirmTimeoutMs`); at once when none is asked for. Rejects with a
   * {@link RedisUnavailableError} naming `what` otherwise: a failover could take the write back.
   * `written.on`: the `server` read just before the write was sent. When the connection is on
   * another server since (a failover between the write and its `WAIT`), it rejects too: the
   * `WAIT` would count the new primary's replicas for a write the old primary took.
   */
  confirm(what: string, written?: { on: RedisServer | undefined }): Promise<void>;
  /** A Lua script bound to this connection. */
  script(source: string): RedisScript;
  /** `redis redis://host:port/db` with any password removed, for logs and `/readyz`. */
  describe(): string;
  /** Closes the connection (pending commands are answered first). Safe to call more than once; `start()` may follow. */
  close(): Promise<void>;
}

/** Redis could not be reached, or refused a command: the message says what, never the URL's password. */
export class RedisUnavailableError extends ListingAgentError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('redis_unavailable', message, options);
  }
}

/**
 * Redis was reached, but what answers is no server the agent can use (a Sentinel at `url`):
 * a setting to change, not an outage to wait out. `problem` says what was found, `fix` what to set.
 */
export class RedisServerError extends ListingAgentError {
  /** What answers, and why the agent cannot use it. */
  readonly problem: string;
  /** The settings to change, named as the one who made the connection sets them. */
  readonly fix: string;

  constructor(problem: string, fix: string) {
    super('redis_wrong_server', `${problem}: ${fix}`);
    this.problem = problem;
    this.fix = fix;
  }
}

/** Turns any Redis failure into a {@link RedisUnavailableError} naming what was being done. */
export function redisFailure(doing: string, error: unknown): RedisUnavailableError {
  if (error instanceof RedisUnavailableError) return error;
  const detail = errorMessage(error);
  return new RedisUnavailableError(`Redis: could not ${doing}: ${detail}`, { cause: error });
}
