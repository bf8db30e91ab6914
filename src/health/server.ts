import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Registry } from 'prom-client';
import type { AgentLogger } from '../agent/logger.js';
import type { Readiness } from '../agent/readiness.js';
import { formatAddress, ListenError, type ListenAddress, type ListenSetting } from './listen-error.js';

/** Options of {@link createHealthServer}. */
export interface HealthServerOptions {
  /** Where to listen. Port 0 picks a free port (`start()` reports it). */
  listen: ListenAddress;
  /** What `/readyz` reports. */
  readiness: Readiness;
  /** What `/metrics` serves. */
  registry: Registry;
  logger: AgentLogger;
  /**
   * The setting a `ListenError` tells people to change.
   * Default `{ path: 'health.listen', env: 'LISTING_AGENT_HEALTH_LISTEN' }`.
   */
  setting?: ListenSetting;
}

/** The health server: `/healthz`, `/readyz`, `/metrics`. */
export interface HealthServer {
  /**
   * Listens; resolves with the base URL (`http://127.0.0.1:9464`, with the real port when 0 was
   * asked). Rejects with a `ListenError` naming the address and the fix. Calling it again returns
   * the same promise.
   */
  start(): Promise<string>;
  /** Closes the server and every open connection. Safe to call more than once, or before `start()`. */
  stop(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

const DEFAULT_SETTING: ListenSetting = { path: 'health.listen', env: 'LISTING_AGENT_HEALTH_LISTEN' };
const PATHS = ['/healthz', '/readyz', '/metrics'] as const;
const ALLOW = 'GET, HEAD';

/** Probes send a line of headers; anything slow or large is not a probe. */
const LIMITS = {
  headersTimeout: 5_000,
  requestTimeout: 10_000,
  keepAliveTimeout: 5_000,
  // How often node checks the two timeouts above (its default, 30 s, would let them run long).
  connectionsCheckingInterval: 1_000,
  maxHeaderSize: 8 * 1024,
} as const;

interface Reply {
  status: number;
  contentType: string;
  body: string;
  headers?: Record<string, string>;
}

const json = (status: number, value: unknown, headers?: Record<string, string>): Reply => ({
  status,
  contentType: 'application/json; charset=utf-8',
  body: JSON.stringify(value),
  ...(headers ? { headers } : {}),
});

/** Creates the health server (not listening until `start()`). */
export function createHealthServer(options: HealthServerOptions): HealthServer {
  const { listen, readiness, registry, logger } = options;
  const setting = options.setting ?? DEFAULT_SETTING;

  async function route(req: IncomingMessage): Promise<Reply> {
    const path = (req.url ?? '/').split(/[?#]/, 1)[0];
    if (!PATHS.some((known) => known === path)) {
      return json(404, { error: `no such path: the health server answers ${PATHS.join(', ')}` });
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return json(405, { error: `${req.method ?? 'this method'} is not allowed: use ${ALLOW}` }, { allow: ALLOW });
    }
    if (path === '/healthz') return json(200, { status: 'ok' });
    if (path === '/readyz') {
      const snapshot = readiness.snapshot();
      return json(snapshot.ready ? 200 : 503, snapshot);
    }
    return { status: 200, contentType: registry.contentType, body: await registry.metrics() };
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let reply: Reply;
    try {
      reply = await route(req);
    } catch (error) {
      // A metric's collect callback threw: say so, and keep serving.
      logger.warn({ err: error instanceof Error ? error.message : String(error), url: req.url }, 'health request failed');
      reply = json(500, { error: 'internal error: see the agent log' });
    }
    res.writeHead(reply.status, {
      'content-type': reply.contentType,
      'content-length': Buffer.byteLength(reply.body),
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      ...reply.headers,
    });
    // HEAD gets the headers (with the length the body would have) and no body.
    res.end(req.method === 'HEAD' ? undefined : reply.body);
  }

  const server = createServer(LIMITS, (req, res) => void handle(req, res));
  // Garbage, oversized headers or a stalled client must not take the process down.
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    logger.debug({ err: error.message, code: error.code }, 'bad request on the health port');
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
  });

  let starting: Promise<string> | undefined;
  let stopping: Promise<void> | undefined;

  async function start(): Promise<string> {
    try {
      const port = await listenOn(server, listen);
      // Errors after listening (accept failures such as EMFILE) are logged, never thrown.
      server.on('error', (error) => logger.error({ err: error.message }, 'health server error'));
      return `http://${formatAddress({ host: listen.host, port })}`;
    } catch (error) {
      throw new ListenError('health server', listen, error, setting);
    }
  }

  async function stop(): Promise<void> {
    // Let a listen in progress finish first, or the socket it opens would outlive stop().
    await starting?.catch(() => undefined);
    await new Promise<void>((resolve) => {
      // The callback gets ERR_SERVER_NOT_RUNNING when the server never listened: nothing to close.
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  return {
    start() {
      if (stopping) return Promise.reject(new Error('the health server was stopped: create a new one'));
      starting ??= start();
      return starting;
    },
    stop() {
      stopping ??= stop();
      return stopping;
    },
    [Symbol.asyncDispose]() {
      return this.stop();
    },
  };
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
