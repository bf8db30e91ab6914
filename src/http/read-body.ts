import type { IncomingMessage } from 'node:http';

/** The body as read: its bytes, too large (reading stopped), or gone (the client left, or the timeout cut it off). */
export type BodyResult = { kind: 'bytes'; bytes: Buffer } | { kind: 'too_large' } | { kind: 'gone' };

/**
 * Reads the request body up to `maxBytes`. A declared `content-length` above it is refused before a
 * byte is read; a body that grows past it stops being kept at once.
 */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<BodyResult> {
  const declared = Number(req.headers['content-length']);
  if (declared > maxBytes) return Promise.resolve({ kind: 'too_large' });
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (result: BodyResult) => {
      if (settled) return;
      settled = true;
      chunks.length = 0;
      resolve(result);
    };
    req.on('data', (chunk: Buffer) => {
      if (settled) return;
      size += chunk.length;
      if (size > maxBytes) {
        settle({ kind: 'too_large' });
        // Stop pulling bytes: the connection is closed after the 413.
        req.pause();
      } else chunks.push(chunk);
    });
    req.on('end', () => {
      if (settled) return;
      const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
      settle({ kind: 'bytes', bytes });
    });
    req.on('error', () => settle({ kind: 'gone' }));
    req.on('close', () => settle({ kind: 'gone' }));
  });
}
