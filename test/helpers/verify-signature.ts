import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

/**
 * Independent check of decisions.md's signature, written from the text and not from
 * src/contract/signature.ts: `x-topgg-signature: t=<s>,v1=<hex>`, the hex HMAC-SHA256 of
 * `<t>.<raw body>` keyed with the secret, compared in constant time.
 */
export function verifySignature(
  request: { headers: IncomingHttpHeaders; rawBody: Buffer },
  secret: string,
): { valid: boolean; t: number | null } {
  const header = request.headers['x-topgg-signature'];
  if (typeof header !== 'string') return { valid: false, t: null };
  const fields = new Map<string, string>();
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    const key = part.slice(0, eq);
    if (eq <= 0 || fields.has(key)) return { valid: false, t: null };
    fields.set(key, part.slice(eq + 1));
  }
  const t = fields.get('t');
  const v1 = fields.get('v1');
  if (t === undefined || !/^\d+$/.test(t) || v1 === undefined || !/^[0-9a-f]{64}$/.test(v1)) return { valid: false, t: null };
  const expected = createHmac('sha256', secret).update(`${t}.`).update(request.rawBody).digest();
  return { valid: timingSafeEqual(expected, Buffer.from(v1, 'hex')), t: Number(t) };
}
