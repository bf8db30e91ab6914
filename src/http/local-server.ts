import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { AgentLogger } from '../log/agent-logger.js';
import { formatAddress, ListenError, type ListenAddress, type ListenSetting } from './listen-error.js';
import { ListingAgentError } from '../errors.js';
import { timerDelay } from '../contract/timer-delay.js';
import { guardConnections, type ConnectionLimits, type ConnectionRefusal } from './connection-guard.js';

/**
 * The agent's own small HTTP servers (health, the push endpoint, the webhook receiver) share one
 * way of listening and closing: short timeouts, bad bytes answered without a crash, a taken port
 * turned into a `ListenError`, caps on open connections (in all and per remote address) with a
 * connection that sends nothing closed soon (`connection-guard.ts`), and a stop that closes every
 * connection (at once, or once the requests in flight are answered). Start and stop may alternate
 * any number of times.
 */

/** Peers send small requests now and then; anything slow or large is not one of them. */
export const LOCAL_SERVER_LIMITS = {
  headersTimeout: 5_000,
  requestTimeout: 10_000,
  keepAliveTimeout: 5_000,
  // How often node checks the two timeouts above. Its default, 30 s, would let them run long; 1 s
  // woke an idle agent every second for each server (most of its idle CPU). A slow client is cut
  // at most this long after its timeout.
  connectionsCheckingInterval: 5_000,
  maxHeaderSize: 8 * 1024,
} as const;

/** The connection limits when the caller sets none (`connection-guard.ts`). */
const LOCAL_SERVER_CONNECTIONS = {
  /** Open connections at most. */
  maxConnections: 256,
  /**
   * From one remote address, at most this share of `maxConnections` (rounded up): half, so that
   * one sender (a reverse proxy in front, the service's egress in a burst) keeps many, and every
   * other address always has the other half.
   */
  perAddressShare: 1 / 2,
  /** A connection that has sent no byte this long after it opened is closed. */
  firstByteMs: 2_000,
} as const;

/**
 * Timeouts of a local server, each in ms; a field left out keeps its default. The webhook
 * receiver's `timeouts` option is this, passed through unchanged.
 */
export interface LocalServerTimeouts {
  /** Time to send the whole header. Default 5 000 (kept at most `requestMs`). */
  headersMs?: number;
  /** Time to send the whole request. Default 10 000. */
  requestMs?: number;
  /** How often the two above are checked. Default 5 000 (a slow client is cut within that past its timeout). */
  checkEveryMs?: number;
  /** A connection that sends no byte this long after it opened is closed. Default 2 000; 0: never. */
  firstByteMs?: number;
}

/** Options of {@link createLocalServer}. */
export interface LocalServerOptions {
  /** What it is, in messages (`health server`, `push endpoint`). */
  what: string;
  listen: ListenAddress;
  /** The config field and variable a `ListenError` names. */
  setting: ListenSetting;
  logger: AgentLogger;
  handler: (req: IncomingMessage, res: ServerResponse) => void;
  /** Tighter or looser timeouts (a receiver that must cut a slow body off sooner, a test). */
  timeouts?: LocalServerTimeouts;
  /**
   * Open connections at most (default 256). At the cap, a new connection closes the oldest one
   * that has sent nothing yet, or is closed itself when there is none, before a byte is read.
   */
  maxConnections?: number;
  /**
   * Open connections from one remote address (an IPv6 address with its /64) at most; one more is
   * closed at once. Default: half of `maxConnections`, rounded up.
   */
  maxConnectionsPerAddress?: number;
}

/** Options of {@link LocalServer.stop}. */
export interface LocalServerStopOptions {
  /**
   * Epoch ms until which requests in flight may finish (no new connection is accepted meanwhile);
   * then every connection is closed. Default: close every connection at once.
   */
  deadline?: number;
  /** The clock of `deadline`. Default `Date.now`. */
  now?: () => number;
}

/** A server made by {@link createLocalServer}. */
export interface LocalServer {
  /**
   * Listens; resolves with `http://host:port` (the real port when 0 was asked). While it listens (or
   * is about to), a second call returns the same promise. After `stop()` it listens again, on a
   * fresh node server (a leader that steps down and leads again starts the same server anew);
   * called while a stop is under way, it listens once that stop is done. A failed listen (a
   * `ListenError`) leaves nothing open: the next call tries again.
   */
  start(): Promise<string>;
  /**
   * Closes the server and every connection, waiting for a listen in progress; with a `deadline`,
   * requests in flight finish first (until then). A second call during a stop returns the first's
   * promise; a start waiting for that stop is called off (it rejects). `start()` may follow.
   */
  stop(options?: LocalServerStopOptions): Promise<void>;
  /** Requests whose response is not finished yet (of the current run: 0 when not listening). */
  inFlight(): number;
}

/** `server.listen` as a promise of the bound port; rejects with the system error. */
function listenOn(server: Server, { host, port }: ListenAddress): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error) => reject(error);
    server.once('error', onError);
    try {
      server.listen(port, host, () => {
        server.off('error', onError);
        resolve((server.address() as AddressInfo).port);
      });
    } catch (error) {
      // A port out of range throws at once instead of emitting.
      server.off('error', onError);
      reject(error);
    }
  });
}

/**
 * One listening life of a local server: its own node server (a node server cannot listen again
 * once closed, so each start makes one), the requests in flight on it, and its start and stop.
 */
interface LocalServerRun {
  readonly server: Server;
  /** Requests in flight, and who waits for them to be done (a graceful stop). */
  active: number;
  drained: (() => void) | undefined;
  starting: Promise<string>;
  stopping: Promise<void> | undefined;
}

/** What a local server holds: its options, the current run, and a start waiting for a stop. */
interface LocalServerState {
  readonly options: LocalServerOptions;
  /** The run listening, starting or stopping; undefined before the first start and after a stop. */
  run: LocalServerRun | undefined;
  /** A start asked for while the run was stopping: it listens once that stop is done. */
  queued: { promise: Promise<string>; cancelled: boolean } | undefined;
}

/** Node's server options for `timeouts`: {@link LOCAL_SERVER_LIMITS} with the caller's, headers at most the request's. */
export function localServerLimits(timeouts: LocalServerTimeouts | undefined): Record<keyof typeof LOCAL_SERVER_LIMITS, number> {
  const requestTimeout = timeouts?.requestMs ?? LOCAL_SERVER_LIMITS.requestTimeout;
  return {
    ...LOCAL_SERVER_LIMITS,
    requestTimeout,
    headersTimeout: Math.min(timeouts?.headersMs ?? LOCAL_SERVER_LIMITS.headersTimeout, requestTimeout),
    connectionsCheckingInterval: timeouts?.checkEveryMs ?? LOCAL_SERVER_LIMITS.connectionsCheckingInterval,
  };
}

/** The connection limits in use: the caller's, else {@link LOCAL_SERVER_CONNECTIONS}. */
export function connectionLimits(
  options: Pick<LocalServerOptions, 'timeouts' | 'maxConnections' | 'maxConnectionsPerAddress'>,
): ConnectionLimits {
  const max = options.maxConnections ?? LOCAL_SERVER_CONNECTIONS.maxConnections;
  return {
    max,
    perAddress: options.maxConnectionsPerAddress ?? Math.max(1, Math.ceil(max * LOCAL_SERVER_CONNECTIONS.perAddressShare)),
    firstByteMs: options.timeouts?.firstByteMs ?? LOCAL_SERVER_CONNECTIONS.firstByteMs,
  };
}

/** Answers bad bytes, oversized headers and stalled clients without a crash (431, 408, else 400). */
function answerClientError(options: LocalServerOptions, error: NodeJS.ErrnoException, socket: Duplex): void {
  options.logger.debug({ err: error.message, code: error.code }, `bad request on the ${options.what} port`);
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
}

const CLOSED_BECAUSE: Record<ConnectionRefusal, string> = {
  address_cap: 'too many open from its address',
  total_cap: 'too many open, none of them idle',
  silent_evicted: 'it sent nothing and a new connection needed its place',
  first_byte_timeout: 'it sent nothing in time',
};

/** A fresh node server for one run: the shared limits, the handler, the connection caps, and bad bytes answered. */
function newRun(options: LocalServerOptions): LocalServerRun {
  const { what, logger } = options;
  // 'close' fires once per response (node guards it), whether it finished or the connection died:
  // one listener shared by every response rather than a closure and a once-wrapper per request.
  const onResponseClose = () => {
    run.active -= 1;
    if (run.active === 0) run.drained?.();
  };
  const server = createServer(localServerLimits(options.timeouts), (req, res) => {
    run.active += 1;
    res.on('close', onResponseClose);
    options.handler(req, res);
  });
  const run: LocalServerRun = { server, active: 0, drained: undefined, starting: Promise.resolve(''), stopping: undefined };
  const limits = connectionLimits(options);
  guardConnections(server, limits, (reason, remote) => {
    logger.debug({ reason, remote, ...limits }, `connection closed on the ${what} port: ${CLOSED_BECAUSE[reason]}`);
  });
  // Garbage, oversized headers or a stalled client must not take the process down.
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => answerClientError(options, error, socket));
  return run;
}

async function listenRun(options: LocalServerOptions, run: LocalServerRun): Promise<string> {
  const { what, listen, setting, logger } = options;
  try {
    const port = await listenOn(run.server, listen);
    // Errors after listening (accept failures such as EMFILE) are logged, never thrown.
    run.server.on('error', (error) => logger.error({ err: error.message }, `${what} error`));
    return `http://${formatAddress({ host: listen.host, port })}`;
  } catch (error) {
    throw new ListenError(what, listen, error, setting);
  }
}

/** Starts a run on a fresh node server; a failed listen leaves no run behind, so the next start tries again. */
function startRun(state: LocalServerState): Promise<string> {
  const run = newRun(state.options);
  state.run = run;
  run.starting = listenRun(state.options, run);
  run.starting.catch(() => {
    if (state.run === run && run.stopping === undefined) state.run = undefined;
  });
  return run.starting;
}

/** Resolves when no request is in flight, or at `deadline`, whichever comes first. */
function settle(run: LocalServerRun, deadline: number, now: () => number): Promise<void> {
  if (run.active === 0) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const timer = setTimeout(finish, timerDelay(deadline - now()));
    timer.unref();
    function finish() {
      clearTimeout(timer);
      run.drained = undefined;
      resolve();
    }
    run.drained = finish;
  });
}

async function stopRun(run: LocalServerRun, stopOptions: LocalServerStopOptions): Promise<void> {
  const { server } = run;
  // Let a listen in progress finish first, or the socket it opens would outlive stop().
  await run.starting.catch(() => undefined);
  const closed = new Promise<void>((resolve) => {
    // The callback gets ERR_SERVER_NOT_RUNNING when the server never listened: nothing to close.
    server.close(() => resolve());
  });
  if (stopOptions.deadline !== undefined) {
    // No new connection from here; idle keep-alive ones go now, busy ones once answered.
    server.closeIdleConnections();
    await settle(run, stopOptions.deadline, stopOptions.now ?? Date.now);
  }
  server.closeAllConnections();
  await closed;
}

/** See {@link LocalServer.start}. */
function start(state: LocalServerState): Promise<string> {
  const { run } = state;
  if (run === undefined) return startRun(state);
  if (run.stopping === undefined) return run.starting;
  // Stopping: listen again once the port is free (the gate's stop-then-start, or a caller's).
  if (state.queued) return state.queued.promise;
  const queued: NonNullable<LocalServerState['queued']> = { promise: Promise.resolve(''), cancelled: false };
  queued.promise = run.stopping.then(() => {
    if (state.queued === queued) state.queued = undefined;
    if (queued.cancelled) throw new ListingAgentError('stopped', `the ${state.options.what} was stopped again before it could listen`);
    return start(state);
  });
  state.queued = queued;
  return queued.promise;
}

/** See {@link LocalServer.stop}. */
function stop(state: LocalServerState, stopOptions: LocalServerStopOptions): Promise<void> {
  if (state.queued) {
    // The latest call wins: a start that waited for the stop under way no longer listens.
    state.queued.cancelled = true;
    state.queued = undefined;
  }
  const { run } = state;
  if (run === undefined) return Promise.resolve();
  run.stopping ??= stopRun(run, stopOptions).finally(() => {
    if (state.run === run) state.run = undefined;
  });
  return run.stopping;
}

/**
 * Creates a local server (not listening until `start()`). It can be started and stopped any
 * number of times: each start listens on a fresh node server with the same options, so a
 * capability stopped when its agent loses the leader lease listens again when it takes it back.
 */
export function createLocalServer(options: LocalServerOptions): LocalServer {
  const state: LocalServerState = { options, run: undefined, queued: undefined };
  return {
    start: () => start(state),
    stop: (stopOptions = {}) => stop(state, stopOptions),
    inFlight: () => state.run?.active ?? 0,
  };
}
