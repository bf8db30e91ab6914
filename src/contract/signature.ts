import { createHmac } from 'node:crypto';
import { SIGNATURE_HEADER, TRACE_HEADER } from './limits.js';

/**
 * The lowercase hex HMAC-SHA256 of `<t>.<raw body>` keyed with the webhook secret (decisions.md,
 * "Signed webhook deliveries").
 */
export function computeSignature(secret: string, timestampSeconds: number, rawBody: string | Uint8Array): string {
  return createHmac('sha256', secret)
    .update(`${timestampSeconds}.`)
    .update(rawBody)
    .digest('hex');
}

/** Options of {@link signDelivery}. */
export interface SignDeliveryOptions {
  /** The webhook secret (`whs_...`). */
  secret: string;
  /** The exact bytes that will be sent as the body. */
  rawBody: string | Uint8Array;
  /** Signing time in Unix seconds. */
  timestampSeconds: number;
  /** The delivery trace ID; omitted from the headers when absent. */
  traceId?: string;
}

/** Makes the headers of a signed delivery: `x-topgg-signature: t=<t>,v1=<hex>` and the trace ID. */
export function signDelivery(options: SignDeliveryOptions): Record<string, string> {
  const signature = computeSignature(options.secret, options.timestampSeconds, options.rawBody);
  const headers: Record<string, string> = {
    [SIGNATURE_HEADER]: `t=${options.timestampSeconds},v1=${signature}`,
  };
  if (options.traceId !== undefined) headers[TRACE_HEADER] = options.traceId;
  return headers;
}
