import type { IncomingMessage, ServerResponse } from 'node:http';


/**
 * The receiver's HTTP plumbing, apart from what it decides: reading a capped body, writing a
 * reply, closing a connection whose body is not worth reading, answering in batches.
 */

/** What the receiver answers. */
export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Close the connection after the answer without reading what is left of the body. */
  close?: boolean;
}

/** How long a refused connection may still drain before it is destroyed, so the client can read the answer first. */
const LINGER_MS = 250;

/** The headers of every answer. */
const COMMON_HEADERS = { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' } as const;
/** A 204 on a connection that stays open, the answer to almost every delivery: headers built once (and no Content-Length, RFC 9110 8.6). */
const NO_CONTENT_HEADERS: Readonly<Record<string, string>> = Object.freeze({ ...COMMON_HEADERS });

/** Writes `reply`; a connection that is gone is left alone. Never throws. */
export function send(req: IncomingMessage, res: ServerResponse, reply: Reply): void {
  if (res.headersSent || res.destroyed || req.socket.destroyed) return;
  if (reply.status === 204 && reply.headers === undefined && reply.close !== true && req.complete) {
    res.writeHead(204, NO_CONTENT_HEADERS);
    res.end();
    return;
  }
  const text = reply.body === undefined || reply.status === 204 ? '' : JSON.stringify(reply.body);
  const close = reply.close === true || !req.complete;
  res.writeHead(reply.status, {
    ...(text ? { 'content-type': 'application/json; charset=utf-8' } : {}),
    // A 204 carries no Content-Length at all (RFC 9110 8.6).
    ...(reply.status === 204 ? {} : { 'content-length': String(Buffer.byteLength(text)) }),
    ...COMMON_HEADERS,
    ...(close ? { connection: 'close' } : {}),
    ...reply.headers,
  });
  if (close) {
    // Node would otherwise read (and discard) the rest of the body, 10 MB of it if that was sent.
    if (!req.complete) req.pause();
    res.once('finish', () => {
      const socket = req.socket;
      socket.end();
      const timer = setTimeout(() => socket.destroy(), LINGER_MS);
      timer.unref();
      socket.once('close', () => clearTimeout(timer));
    });
  }
  res.end(text);
}

/**
 * Runs `run` for every item pushed, together, once per turn of the event loop (`setImmediate`,
 * right after the poll phase that read the requests). Under load, answers written back to back
 * wake the sender once instead of once each and leave the loop fewer, fuller turns; alone, an
 * item waits only for the rest of its turn. `onError` hears what `run` throws (the other items
 * still run).
 */
export function createTurnBatch<T>(run: (item: T) => void, onError: (error: unknown) => void): (item: T) => void {
  let pending: T[] = [];
  const flush = () => {
    const batch = pending;
    pending = [];
    for (const item of batch) {
      try {
        run(item);
      } catch (error) {
        onError(error);
      }
    }
  };
  return (item) => {
    if (pending.length === 0) setImmediate(flush);
    pending.push(item);
  };
}
