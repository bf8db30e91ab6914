import { EventEmitter } from 'node:events';
import type { AgentLogger } from '../log/agent-logger.js';
import { timerDelay } from '../contract/timer-delay.js';
import { RedisServerError, RedisUnavailableError, type RedisClient, type RedisConnectionEvents } from './connection-types.js';
import type { Link } from './links.js';
import { describeServer, sameServer, serverFrom, type RedisServer } from './server.js';
import { errorMessage } from '../errors.js';

/**
 * Where a connection stands, and every change of it: a connection is up only once a check of the
 * server (`ROLE` and `INFO server`, after each connect) found a primary. On a replica it is not up
 * and reconnects with the backoff until it reaches the primary (an endpoint that moves to the
 * promoted replica); a `READONLY` reply (a primary demoted under an open connection) does the
 * same at once. A Sentinel at a URL is refused for good: a setting to change, not an outage.
 */

/** How the connection's messages name the settings, in the voice of whoever made it. */
export interface RedisSettingWords {
  /** `url`, or `state.redis.url (LISTING_AGENT_STATE_REDIS_URL)` for the daemon. */
  url: string;
  /** `sentinel.masterName`, or the config's key. */
  masterName: string;
  /** `sentinel.nodes`, or the config's key. */
  nodes: string;
  /** `cluster.nodes`, or the config's key. */
  clusterNodes: string;
}

/** The state of one connection (connection.ts makes it and hands out its methods). */
export interface ConnectionState {
  readonly link: Link;
  /** The facade over the link's client (command-facade.ts). */
  client: RedisClient;
  /** `RedisConnection.confirm` (confirm.ts). */
  confirm: (what: string) => Promise<void>;
  readonly emitter: EventEmitter<RedisConnectionEvents>;
  readonly logger: AgentLogger;
  readonly words: RedisSettingWords;
  /** `redis redis://host:port/db`, without a password, or the Sentinels' primary by name. */
  readonly description: string;
  readonly delays: readonly number[];
  up: boolean;
  downReason: string | undefined;
  /** The last server a check found (kept across reconnects: a reconnect to the same one is no change). */
  server: RedisServer | undefined;
  /** Whether the link is connected to `server` now (a check found it, and the link was not lost since). */
  onServer: boolean;
  /** Set for good once the server is one the agent cannot use (a Sentinel at `url`). */
  refused: RedisServerError | undefined;
  started: boolean;
  closing: Promise<void> | undefined;
  /** Counts the checks, so that an answer to an older one (before a reconnect, a close) is ignored. */
  generation: number;
  /** Checks in a row that found no usable server: the backoff's step. */
  misses: number;
  retryTimer: NodeJS.Timeout | undefined;
}

function markUp(state: ConnectionState): void {
  state.misses = 0;
  if (state.up) return;
  state.up = true;
  state.downReason = undefined;
  state.logger.info({ redis: state.description, server: state.server?.address ?? null }, 'Redis connected');
  state.emitter.emit('up');
}

/** Not usable, for `reason`. `down` is emitted when it was up, and with `always` (a server it cannot use found) too. */
export function markDown(state: ConnectionState, reason: string, always = false): void {
  if (state.closing !== undefined || !state.started) return;
  // Refused for good: the close that follows is no new reason.
  if (state.refused !== undefined && reason !== state.refused.message) return;
  const wasUp = state.up;
  const changed = state.downReason !== reason;
  state.up = false;
  state.downReason = reason;
  if (wasUp) state.logger.warn({ redis: state.description, reason }, 'Redis connection lost; reconnecting');
  if (wasUp || (always && changed)) state.emitter.emit('down', reason);
}

/** The next wait of the backoff. */
function nextDelay(state: ConnectionState): number {
  const delay = state.delays[Math.min(state.misses, state.delays.length - 1)] ?? 2_000;
  state.misses += 1;
  return delay;
}

/** In a moment: `reconnect` (a new socket), `connect` (the Sentinel client gave up), or check the server again. */
export function retryLater(state: ConnectionState, action: 'check' | 'reconnect' | 'connect'): void {
  clearTimeout(state.retryTimer);
  if (!state.started || state.closing !== undefined || state.refused !== undefined) return;
  state.retryTimer = setTimeout(() => {
    state.retryTimer = undefined;
    if (!state.started || state.closing !== undefined) return;
    if (action === 'check') void checkServer(state);
    else if (action === 'reconnect') state.link.reconnect();
    else state.link.connect();
  }, timerDelay(nextDelay(state)));
  state.retryTimer.unref();
}

/** Takes `server` as the one the connection is on; `server` is emitted when it is another than before. */
function noteServer(state: ConnectionState, server: RedisServer): void {
  if (sameServer(state.server, server)) return;
  const previous = state.server;
  state.server = server;
  if (previous !== undefined) {
    const was = `${previous.address} ${previous.role} ${previous.runId}`;
    const now = `${server.address} ${server.role} ${server.runId}`;
    state.logger.warn({ redis: state.description, was, now }, 'Redis server changed (a restart or a failover)');
  }
  state.emitter.emit('server', server);
}

/** A Sentinel where a server was expected: refused for good, with the settings to change. */
function refuse(state: ConnectionState, server: RedisServer): void {
  const names = server.monitors ?? [];
  const monitors = names.length > 0 ? ` (it monitors ${names.join(', ')})` : '';
  const problem = `${state.description} is a Sentinel${monitors}, not a Redis server: every command would fail there`;
  const name = names.length === 1 ? ` to ${names[0]}` : '';
  const { words } = state;
  const nodes = `${words.nodes} to the Sentinels' host:port (this one among them)`;
  const fix = `set ${words.masterName}${name} and ${nodes}, instead of ${words.url}`;
  state.refused = new RedisServerError(problem, fix);
  state.logger.error({ redis: state.description }, state.refused.message);
  markDown(state, state.refused.message, true);
  // Nothing to reconnect to: the connection stays closed until the settings change.
  void state.link.close().catch(() => undefined);
}

/** What the server answers to ROLE and INFO server, as a {@link RedisServer}; throws when it cannot say. */
async function readServer(state: ConnectionState): Promise<RedisServer> {
  const [role, info] = await Promise.all([state.client.sendCommand(['ROLE']), state.client.sendCommand(['INFO', 'server'])]);
  const server = serverFrom(role, String(info), state.link.address() ?? 'the server');
  if (server === undefined) throw new RedisUnavailableError('the server answers ROLE with no role Redis has: is this Redis?');
  return server;
}

/**
 * Checks the server the link is connected to (after each connect, and after a READONLY reply):
 * up on a primary; on a replica, down with the reason and a reconnect later; a Sentinel refused.
 */
export async function checkServer(state: ConnectionState): Promise<void> {
  const generation = (state.generation += 1);
  clearTimeout(state.retryTimer);
  const stale = () => generation !== state.generation || !state.started || state.closing !== undefined;
  let server: RedisServer;
  try {
    if (!state.link.canSend()) throw new RedisUnavailableError(state.downReason ?? 'no primary connected yet');
    server = await readServer(state);
  } catch (error) {
    if (stale()) return;
    markDown(state, errorMessage(error));
    // A server link checks again at its next `ready`; it only asks again when it is still connected.
    if (state.link.kind !== 'server' || state.link.canSend()) retryLater(state, 'check');
    return;
  }
  if (stale()) return;
  noteServer(state, server);
  state.onServer = true;
  if (server.role === 'primary') return markUp(state);
  if (server.role === 'sentinel' && state.link.kind === 'server') return refuse(state, server);
  const via = {
    server: `reconnecting until ${state.words.url} leads to the primary`,
    sentinel: 'waiting for the Sentinels to name the primary',
    cluster: "waiting for the cluster to name the primary of the agent's slot",
  }[state.link.kind];
  const reason = `on ${describeServer(server)}, not on the primary: not ready, and leading nothing; ${via}`;
  if (state.downReason !== reason) state.logger.warn({ redis: state.description, server: server.address }, reason);
  markDown(state, reason, true);
  retryLater(state, state.link.kind === 'sentinel' ? 'check' : 'reconnect');
}

/** A command's error, seen by the connection: `READONLY` means the server is a replica now. */
export function observeReply(state: ConnectionState, error: unknown): void {
  if (!(error instanceof Error) || !error.message.startsWith('READONLY') || !state.up) return;
  markDown(state, 'the server answered READONLY: it is a replica now (a failover?); looking for the primary', true);
  if (state.link.kind === 'sentinel') retryLater(state, 'check');
  else state.link.reconnect();
}

/**
 * A command had no answer within its deadline. A single server may be frozen (stopped, or cut off
 * behind a connection that stays open): down, and connected again, so that the commands written to
 * the old socket are dropped with it and `/readyz` says so until the server answers again. Behind
 * Sentinels or a cluster the client follows the primary that replaces it.
 */
export function observeLate(state: ConnectionState, deadlineMs: number): void {
  if (state.link.kind !== 'server' || !state.up) return;
  markDown(state, `the server did not answer within ${deadlineMs} ms (stopped or cut off?); connecting again`, true);
  state.link.reconnect();
}

/** See `RedisConnection.whenUp`. */
export function whenUp(state: ConnectionState, options: { timeoutMs?: number; signal?: AbortSignal }): Promise<void> {
  if (state.up) return Promise.resolve();
  if (state.refused) return Promise.reject(state.refused);
  const { emitter, description } = state;
  return new Promise<void>((resolve, reject) => {
    const finish = (error?: Error) => {
      clearTimeout(timer);
      emitter.off('up', onUp);
      emitter.off('down', onDown);
      options.signal?.removeEventListener('abort', onAbort);
      if (error) reject(error);
      else resolve();
    };
    const onUp = () => finish();
    const onDown = () => {
      if (state.refused) finish(state.refused);
    };
    const onAbort = () => finish(new RedisUnavailableError(`Redis: stopped waiting for ${description}`));
    const late = () => `Redis: ${description} not reachable after ${options.timeoutMs} ms (${state.downReason ?? 'no answer'})`;
    const { timeoutMs } = options;
    const timer = timeoutMs === undefined ? undefined : setTimeout(() => finish(new RedisUnavailableError(late())), timeoutMs);
    timer?.unref();
    emitter.on('up', onUp);
    emitter.on('down', onDown);
    if (options.signal?.aborted) onAbort();
    else options.signal?.addEventListener('abort', onAbort, { once: true });
  });
}
