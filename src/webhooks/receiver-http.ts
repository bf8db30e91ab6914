import type { IncomingMessage, ServerResponse } from 'node:http';

export { readBody, type BodyResult } from '../http/read-body.js';

/**
 * The receiver's HTTP plumbing, apart from what it decides: reading a capped body, writing a
 * reply, closing a connection whose body is not worth reading, and keeping a flood of bad
 * requests from flooding the log too.
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

/** Writes `reply`; a connection that is gone is left alone. Never throws. */
export function send(req: IncomingMessage, res: ServerResponse, reply: Reply): void {
  if (res.headersSent || res.destroyed || req.socket.destroyed) return;
  const text = reply.body === undefined || reply.status === 204 ? '' : JSON.stringify(reply.body);
  const close = reply.close === true || !req.complete;
  res.writeHead(reply.status, {
    ...(text ? { 'content-type': 'application/json; charset=utf-8' } : {}),
    // A 204 carries no Content-Length at all (RFC 9110 8.6).
    ...(reply.status === 204 ? {} : { 'content-length': String(Buffer.byteLength(text)) }),
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
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

/** The request's path without its query. */
export function pathOf(req: IncomingMessage): string {
  const url = req.url ?? '/';
  const cut = url.search(/[?#]/);
  return cut < 0 ? url : url.slice(0, cut);
}

/**
 * At most one log line per reason per `everyMs`; the lines in between are counted and the next
 * logged line says how many were left out.
 */
export function createLogThrottle(now: () => number, everyMs = 10_000): (reason: string) => number | undefined {
  const last = new Map<string, { at: number; skipped: number }>();
  return (reason) => {
    const at = now();
    const seen = last.get(reason);
    if (seen !== undefined && at - seen.at < everyMs) {
      seen.skipped += 1;
      return undefined;
    }
    last.set(reason, { at, skipped: 0 });
    return seen?.skipped ?? 0;
  };
}
