import type { AgentMetrics } from '../runtime/metrics.js';
import type { AgentCluster } from './cluster.js';
import type { AgentLogger } from '../log/agent-logger.js';
import type { Readiness } from '../runtime/readiness.js';
import { RedisServerError, type RedisConnection } from '../redis/connection.js';

/** How long the agent's start waits for Redis before going on without it (it keeps reconnecting). */
const REDIS_START_WAIT_MS = 2_000;

/** While writes are refused (not confirmed on a replica), how often a bare `WAIT` asks whether they are again. */
const REFUSING_CHECK_EVERY_MS = 2_000;

/** What {@link connectCluster} reports to. */
export interface ClusterWiring {
  readiness: Readiness;
  metrics: AgentMetrics;
  logger: AgentLogger;
  /** Aborts the wait for Redis (the agent is stopping). */
  signal: AbortSignal;
  /** Called each time Redis comes (back) up. */
  onRedisUp(): void;
}

/** Whether the connection is down because of the server it reached (a replica), not because it reached none. */
function onUnusableServer(connection: RedisConnection): boolean {
  return !connection.isUp && connection.server !== undefined && connection.server.role !== 'primary';
}

/** `/readyz`'s words for a connection that is up: where, and the primary's address when the Sentinels named it. */
function upDetail(connection: RedisConnection): string {
  const where = connection.describe();
  const address = connection.server?.address;
  return address === undefined || where.includes(address) ? where : `${where}: primary ${address}`;
}

/** `/readyz`'s words for a connection that cannot be used: down, or on a server that takes no writes. */
function notUsable(connection: RedisConnection, reason: string): string {
  const where = connection.describe();
  if (onUnusableServer(connection)) return `${where}: ${reason}; webhook votes are answered 503 until the primary is reached`;
  return `${where} is down (${reason}): webhook votes are answered 503 until it returns`;
}

/**
 * Follows the connection's `refusing` (writes not confirmed on a replica): the reason now, `changed`
 * called at each change, one warning when it starts and one line when it ends. Without a write to
 * confirm, nothing would say a replica has them again: meanwhile a bare `WAIT` asks every
 * {@link REFUSING_CHECK_EVERY_MS}.
 */
function followRefusals(connection: RedisConnection, wiring: ClusterWiring, changed: () => void): { reason(): string | undefined } {
  const where = connection.describe();
  let refusing: string | undefined;
  let checking: NodeJS.Timeout | undefined;
  const check = () => void connection.confirm('the writes so far').catch(() => undefined);
  wiring.signal.addEventListener('abort', () => clearInterval(checking), { once: true });
  connection.on('refusing', (reason) => {
    const was = refusing;
    refusing = reason;
    clearInterval(checking);
    checking = undefined;
    if (reason !== undefined) {
      const said = 'Redis: writes are not confirmed on a replica; they are refused (503) until one has them';
      wiring.logger.warn({ redis: where, reason }, said);
      if (!wiring.signal.aborted) (checking = setInterval(check, REFUSING_CHECK_EVERY_MS)).unref();
    } else if (was !== undefined) wiring.logger.info({ redis: where }, 'Redis: writes are confirmed on a replica again');
    changed();
  });
  return { reason: () => refusing };
}

/**
 * Wires a cluster's readiness (`redis`, `leader`), metrics and logs, starts its Redis connection,
 * and waits up to {@link REDIS_START_WAIT_MS} for it. Never fails on Redis: when it is not there
 * yet, `redis` says so, a warning is logged, and the connection keeps trying in the background.
 */
export async function connectCluster(cluster: AgentCluster, wiring: ClusterWiring): Promise<void> {
  const { connection, leadership, agentId } = cluster;
  const { readiness, metrics, logger } = wiring;
  const where = connection.describe();
  /** Whether the lease was read at least once: before that, no leader seen is not "none". */
  let read = false;
  const markLeader = () => {
    const token = leadership.fencingToken;
    if (token !== undefined) readiness.set('leader', true, `leading (token ${token}); agent ${agentId}`);
    else
      readiness.set(
        'leader',
        true,
        `standing by (leader: ${leadership.leaderId ?? (read ? 'none yet' : 'not known yet, Redis not read')}); agent ${agentId}`,
      );
  };
  /** Reads who holds the lease (one read at a time), so that a standby names its leader before its first try answers. */
  let looking: Promise<void> | undefined;
  const look = () =>
    (looking ??= leadership.look().then((done) => {
      looking = undefined;
      if (done) read = true;
      markLeader();
    }));
  readiness.set('redis', false, `connecting to ${where}`);
  markLeader();
  /** What `down` said of a server reached but not usable (a replica), until `up`: kept while it reconnects to look again. */
  let unusable: string | undefined;
  const refusals = followRefusals(connection, wiring, () => {
    if (connection.isUp) markUp();
  });
  const markUp = () => {
    const detail = upDetail(connection);
    const refusing = refusals.reason();
    if (refusing === undefined) return readiness.set('redis', true, detail);
    return readiness.set('redis', false, `${detail}: writes ${refusing}; webhook votes are answered 503 until a replica has them`);
  };
  connection.on('up', () => {
    unusable = undefined;
    markUp();
    if (!read) void look();
    wiring.onRedisUp();
  });
  connection.on('down', (reason) => {
    const detail = notUsable(connection, reason);
    unusable = onUnusableServer(connection) ? detail : undefined;
    readiness.set('redis', false, detail);
  });
  const heard = () => {
    read = true;
    markLeader();
  };
  leadership.on('change', heard);
  leadership.on('leader', heard);
  metrics.watchCluster(() => ({ redisUp: connection.isUp, agentId, leading: leadership.isLeader }));
  connection.start();
  try {
    await connection.whenUp({ timeoutMs: REDIS_START_WAIT_MS, signal: wiring.signal });
    // Before the health server answers: its first /readyz names the leader another agent may be.
    if (!read) await look();
  } catch (error) {
    // A Sentinel at state.redis.url: a setting to change, which no waiting repairs.
    if (error instanceof RedisServerError) throw error;
    // Between two looks at a replica (a reconnect), the server is not known: what was seen stands.
    const reached = onUnusableServer(connection) ? notUsable(connection, connection.downReason ?? 'not the primary') : unusable;
    if (reached !== undefined) {
      readiness.set('redis', false, reached);
      logger.warn({ redis: where, reason: connection.downReason ?? null }, 'Redis is reached but not usable yet; starting without it');
      return;
    }
    readiness.set('redis', false, `${where} not reachable: the agent runs, and its capabilities start when Redis comes back`);
    logger.warn({ redis: where }, 'Redis is not reachable; starting without it and reconnecting in the background');
  }
}
