import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Registry } from 'prom-client';
import type { AgentLogger } from '../log/agent-logger.js';
import type { Readiness } from '../runtime/readiness.js';
import { createLocalServer } from '../http/local-server.js';
import { allowedHostNames, hostAllowed, hostOf } from '../http/host-check.js';
import type { ListenAddress, ListenSetting } from '../http/listen-error.js';
import { createRefusalLog } from '../runtime/refusal-log.js';
import { errorMessage } from '../errors.js';

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
  /**
   * Host names a request's `Host` header may name besides the listen host, `localhost` and IP
   * addresses (`health.allowedHosts`: the name Prometheus or a proxy uses). A request for any
   * other host is refused with 421, so that no web page can read the server through DNS
   * rebinding. The port is not compared. Default: none.
   */
  allowedHosts?: readonly string[];
  /** How a 421 names the setting of {@link allowedHosts}. Default `health.allowedHosts (LISTING_AGENT_HEALTH_ALLOWED_HOSTS)`. */
  allowedHostsSetting?: string;
  /** Epoch ms, for the summaries of refused requests in the log. Default `Date.now`. */
  now?: () => number;
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
const DEFAULT_HOSTS_SETTING = 'health.allowedHosts (LISTING_AGENT_HEALTH_ALLOWED_HOSTS)';
const PATHS = ['/healthz', '/readyz', '/metrics'] as const;
const ALLOW = 'GET, HEAD';
/** A scraper, probes and a browser or two: 64 connections at most (32 from one address). */
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

/**
 * The names the server answers (`http/host-check.ts`): `refused` answers a request for any other
 * host with 421 and a warn line (the first per 10 s, then a summary) and returns true.
 */
function createHostGuard(options: HealthServerOptions) {
  const hosts = allowedHostNames(options.listen.host, options.allowedHosts ?? []);
  const hostsSetting = options.allowedHostsSetting ?? DEFAULT_HOSTS_SETTING;
  const refusals = createRefusalLog<'wrong_host'>({ logger: options.logger, what: 'health server requests', now: options.now ?? Date.now });
  return {
    refused(req: IncomingMessage, res: ServerResponse): boolean {
      if (hostAllowed(req.headers.host, hosts)) return false;
      const named = (hostOf(req.headers.host ?? '') ?? 'a name it cannot read').slice(0, 100);
      const path = (req.url ?? '/').split(/[?#]/, 1)[0];
      const why = `${named} is not its listen address, localhost, an IP address or in ${hostsSetting}`;
      refusals.refused('wrong_host', req.socket.remoteAddress, { host: named, path }, `health server request refused: the Host ${why}`);
      const fix = `to reach it by that name, add the name to ${hostsSetting}`;
      const body = `421 Misdirected Request: this server does not answer for ${named}; ${fix}\n`;
      res.writeHead(421, {
        'content-type': 'text/plain; charset=utf-8',
        'content-length': Buffer.byteLength(body),
        'cache-control': 'no-store',
        'x-content-type-options': 'nosniff',
      });
      res.end(req.method === 'HEAD' ? undefined : body);
      return true;
    },
    flush: () => refusals.flush(),
  };
}

/** Creates the health server (not listening until `start()`). */
export function createHealthServer(options: HealthServerOptions): HealthServer {
  const { listen, readiness, registry, logger } = options;
  const setting = options.setting ?? DEFAULT_SETTING;
  const hostGuard = createHostGuard(options);

  async function route(req: IncomingMessage): Promise<Reply> {
    const path = (req.url ?? '/').split(/[?#]/, 1)[0];
    if (!PATHS.some((known) => known === path)) {
      return json(404, {
        error: `no such path: the health server answers ${PATHS.join(', ')}${options.pages ? ', and the status page at /' : ''}`,
      });
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
    if (hostGuard.refused(req, res)) return;
    if (options.pages?.handle(req, res)) return;
    let reply: Reply;
    try {
      reply = await route(req);
    } catch (error) {
      // A metric's collect callback threw: say so, and keep serving.
      logger.warn({ err: errorMessage(error), url: req.url }, 'health request failed');
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
    async stop() {
      await server.stop();
      // What the last interval only counted is written now.
      hostGuard.flush();
    },
    [Symbol.asyncDispose]() {
      return this.stop();
    },
  };
}
