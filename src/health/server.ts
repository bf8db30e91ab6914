import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Registry } from 'prom-client';
import type { AgentLogger } from '../log/agent-logger.js';
import type { Readiness } from '../runtime/readiness.js';
import { createLocalServer } from '../http/local-server.js';
import type { ListenAddress, ListenSetting } from '../http/listen-error.js';

/** Options of {@link createHealthServer}. */
export interface HealthServerOptions {
  /** Where to listen. Port 0 picks a free port (`start()` reports it). */
  listen: ListenAddress;
  /** What `/readyz` reports. */
  readiness: Readiness;
  /**
   * What `/metrics` serves: the registry, or what makes it at the first scrape (an agent loads
   * prom-client only when `/metrics` is first asked for).
   */
  registry: Registry | (() => Registry);
  logger: AgentLogger;
  /**
   * More pages on the same port (the status page): asked first for every request; `handle`
   * returns false for a path it does not answer. Default: none.
   */
  pages?: HealthPages;
  /**
   * The setting a `ListenError` tells people to change.
   * Default `{ path: 'health.listen', env: 'LISTING_AGENT_HEALTH_LISTEN' }`.
   */
  setting?: ListenSetting;
}

/** Pages the health server serves beside its own paths (the status page). */
export interface HealthPages {
  /** Answers `req` and returns true, or returns false at once for a path it does not answer. */
  handle(req: IncomingMessage, res: ServerResponse): boolean;
}

/** The health server: `/healthz`, `/readyz`, `/metrics`. */
export interface HealthServer {
  /**
   * Listens; resolves with the base URL (`http://127.0.0.1:9464`, with the real port when 0 was
   * asked). Rejects with a `ListenError` naming the address and the fix. Calling it again while it
   * listens returns the same promise; after `stop()` it listens again.
   */
  start(): Promise<string>;
  /** Closes the server and every open connection. Safe to call more than once, or before `start()`; `start()` may follow. */
  stop(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

const DEFAULT_SETTING: ListenSetting = { path: 'health.listen', env: 'LISTING_AGENT_HEALTH_LISTEN' };
const PATHS = ['/healthz', '/readyz', '/metrics'] as const;
const ALLOW = 'GET, HEAD';
/** A scraper, probes and a browser or two: 64 connections at most (16 from one address). */
const HEALTH_MAX_CONNECTIONS = 64;

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
      return json(404, { error: `no such path: the health server answers ${PATHS.join(', ')}${options.pages ? ', and the status page at /' : ''}` });
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return json(405, { error: `${req.method ?? 'this method'} is not allowed: use ${ALLOW}` }, { allow: ALLOW });
    }
    if (path === '/healthz') return json(200, { status: 'ok' });
    if (path === '/readyz') {
      const snapshot = readiness.snapshot();
      return json(snapshot.ready ? 200 : 503, snapshot);
    }
    const metrics = typeof registry === 'function' ? registry() : registry;
    return { status: 200, contentType: metrics.contentType, body: await metrics.metrics() };
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (options.pages?.handle(req, res)) return;
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

  const server = createLocalServer({
    what: 'health server',
    listen,
    setting,
    logger,
    maxConnections: HEALTH_MAX_CONNECTIONS,
    handler: (req, res) => void handle(req, res),
  });

  return {
    start: () => server.start(),
    stop: () => server.stop(),
    [Symbol.asyncDispose]() {
      return this.stop();
    },
  };
}
