import type { IncomingMessage } from 'node:http';

/** The body as read: its bytes, too large (reading stopped), or gone (the client left, or the timeout cut it off). */
export type BodyResult = { kind: 'bytes'; bytes: Buffer } | { kind: 'too_large' } | { kind: 'gone' };

const TOO_LARGE: BodyResult = Object.freeze({ kind: 'too_large' });
const GONE: BodyResult = Object.freeze({ kind: 'gone' });

/**
 * Reads the request body up to `maxBytes` and calls `done` once with the result (synchronously
 * when a declared `content-length` is above `maxBytes`: refused before a byte is read). A body
 * that grows past `maxBytes` stops being kept at once. No promise and no timer: the receiver's
 * hot path calls this on every delivery.
 */
export function readBodyThen(req: IncomingMessage, maxBytes: number, done: (result: BodyResult) => void): void {
  const declared = Number(req.headers['content-length']);
  if (declared > maxBytes) {
    done(TOO_LARGE);
    return;
  }
  let first: Buffer | undefined;
  let chunks: Buffer[] | undefined;
  let size = 0;
  let settled = false;
  req.on('data', (chunk: Buffer) => {
    if (settled) return;
    size += chunk.length;
    if (size > maxBytes) {
      settled = true;
      first = chunks = undefined;
      // Stop pulling bytes: the connection is closed after the 413.
      req.pause();
      done(TOO_LARGE);
    } else if (first === undefined) first = chunk;
    else (chunks ??= [first]).push(chunk);
  });
  req.on('end', () => {
    if (settled) return;
    settled = true;
    const bytes = chunks !== undefined ? Buffer.concat(chunks, size) : (first ?? Buffer.alloc(0));
    first = chunks = undefined;
    done({ kind: 'bytes', bytes });
  });
  // A request cut short (the client left, a timeout) is destroyed, and a destroyed request always
  // emits 'close'; its 'error' only when someone listens (node's IncomingMessage), so nobody does:
  // one listener less per request. After 'end', 'close' is a no-op.
  req.on('close', () => {
    if (settled) return;
    settled = true;
    first = chunks = undefined;
    done(GONE);
  });
}

/**
 * Reads the request body up to `maxBytes`. A declared `content-length` above it is refused before a
 * byte is read; a body that grows past it stops being kept at once.
 */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<BodyResult> {
  return new Promise((resolve) => readBodyThen(req, maxBytes, resolve));
}
