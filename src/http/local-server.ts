import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { AgentLogger } from '../agent/logger.js';
import { formatAddress, ListenError, type ListenAddress, type ListenSetting } from '../health/listen-error.js';
import { ListingAgentError } from '../errors.js';

/**
 * The agent's own small HTTP servers (health, the push endpoint, and the webhook receiver to
 * come) share one way of listening and closing: short timeouts, bad bytes answered without a
 * crash, a taken port turned into a `ListenError`, and a stop that closes every connection.
 */

/** Peers send small requests now and then; anything slow or large is not one of them. */
export const LOCAL_SERVER_LIMITS = {
  headersTimeout: 5_000,
  requestTimeout: 10_000,
  keepAliveTimeout: 5_000,
  // How often node checks the two timeouts above (its default, 30 s, would let them run long).
  connectionsCheckingInterval: 1_000,
  maxHeaderSize: 8 * 1024,
} as const;

/** Options of {@link createLocalServer}. */
export interface LocalServerOptions {
  /** What it is, in messages (`health server`, `push endpoint`). */
  what: string;
  listen: ListenAddress;
  /** The config field and variable a `ListenError` names. */
  setting: ListenSetting;
  logger: AgentLogger;
  handler: (req: IncomingMessage, res: ServerResponse) => void;
}

/** A server made by {@link createLocalServer}. */
export interface LocalServer {
  /** Listens; resolves with `http://host:port` (the real port when 0 was asked). Once. */
  start(): Promise<string>;
  /** Closes the server and every connection, waiting for a listen in progress. Idempotent. */
  stop(): Promise<void>;
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

/** Creates a local server (not listening until `start()`). */
export function createLocalServer(options: LocalServerOptions): LocalServer {
  const { what, listen, setting, logger } = options;
  const server = createServer(LOCAL_SERVER_LIMITS, options.handler);
  // Garbage, oversized headers or a stalled client must not take the process down.
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    logger.debug({ err: error.message, code: error.code }, `bad request on the ${what} port`);
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
      server.on('error', (error) => logger.error({ err: error.message }, `${what} error`));
      return `http://${formatAddress({ host: listen.host, port })}`;
    } catch (error) {
      throw new ListenError(what, listen, error, setting);
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
      if (stopping) return Promise.reject(new ListingAgentError('stopped', `the ${what} was stopped: create a new one`));
      starting ??= start();
      return starting;
    },
    stop() {
      stopping ??= stop();
      return stopping;
    },
  };
}
