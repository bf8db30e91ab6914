/**
 * Discord's rate-limit headers, read as plain data (no clock, no sockets), so that every caller of
 * Discord's REST API (the count source, the commands source) can decide when it may ask again.
 * See https://discord.com/developers/docs/topics/rate-limits: every answer carries
 * `X-RateLimit-Remaining` and `X-RateLimit-Reset-After` (seconds, with decimals) for its bucket
 * (`X-RateLimit-Bucket`, possibly shared by several routes); a 429 adds `Retry-After` (seconds),
 * `X-RateLimit-Scope` (`user`, `global` or `shared`), `X-RateLimit-Global`, and a JSON body
 * `{ message, retry_after, global }`.
 */

/** Response headers as undici gives them. */
export type RestHeaders = Record<string, string | string[] | undefined>;

/** What one answer says about when the next request may go out. */
export interface RateLimitInfo {
  /** `X-RateLimit-Bucket`, when present: routes with the same bucket share one limit. */
  bucket: string | undefined;
  /**
   * Milliseconds before any request on this bucket (or, when `global`, on any route) may go out;
   * 0 when the answer allows the next one at once.
   */
  waitMs: number;
  /** The wait applies to every route: a global limit (`X-RateLimit-Global`, scope `global`, body `global`). */
  global: boolean;
  /** `X-RateLimit-Scope` of a 429 (`user`, `global`, `shared`). */
  scope: string | undefined;
}

/**
 * How long to wait after a 429 that says nothing readable (a proxy or Cloudflare's page): long
 * enough not to feed Discord's invalid-request limit (401, 403 and 429 count towards a temporary
 * IP ban), short next to the cache lifetime.
 */
const UNKNOWN_429_WAIT_MS = 60_000;

function header(headers: RestHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Non-negative seconds (`1`, `0.25`) as milliseconds; undefined for anything else. */
function seconds(value: unknown): number | undefined {
  const number = typeof value === 'string' && /^\s*\d+(\.\d+)?\s*$/.test(value) ? Number(value) : value;
  return typeof number === 'number' && Number.isFinite(number) && number >= 0 ? Math.ceil(number * 1000) : undefined;
}

/**
 * Reads the rate-limit state of one answer.
 *
 * - 2xx and other statuses: when `X-RateLimit-Remaining` is 0, wait `X-RateLimit-Reset-After`
 *   before the bucket's next request; otherwise no wait.
 * - 429: wait the longest of the body's `retry_after`, `Retry-After` and `X-RateLimit-Reset-After`
 *   (the body's value is the precise one; taking the longest never comes back early), or
 *   {@link UNKNOWN_429_WAIT_MS} when none is readable.
 */
export function readRateLimit(status: number, headers: RestHeaders, body: unknown): RateLimitInfo {
  const bucket = header(headers, 'x-ratelimit-bucket');
  const scope = header(headers, 'x-ratelimit-scope');
  const resetAfter = seconds(header(headers, 'x-ratelimit-reset-after'));
  if (status !== 429) {
    const remaining = header(headers, 'x-ratelimit-remaining');
    const exhausted = remaining !== undefined && Number(remaining) <= 0;
    return { bucket, waitMs: exhausted ? (resetAfter ?? 0) : 0, global: false, scope };
  }
  const record = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  const waits = [seconds(record.retry_after), seconds(header(headers, 'retry-after')), resetAfter].filter(
    (ms): ms is number => ms !== undefined,
  );
  const global = record.global === true || header(headers, 'x-ratelimit-global') === 'true' || scope === 'global';
  return { bucket, waitMs: waits.length > 0 ? Math.max(...waits) : UNKNOWN_429_WAIT_MS, global, scope };
}

/** When a route may be asked again, and why it may not before. */
interface RouteBlock {
  /** Epoch ms before which the route must not be requested; 0 when it may be now. */
  until: number;
  /** Why (`answered 429 with scope user`), as recorded with the wait. */
  note: string | undefined;
}

/**
 * When each route may be asked again, by bucket: Discord may share a bucket between routes, and
 * says so with `X-RateLimit-Bucket`; until a route's bucket is known, the route is its own key.
 */
export interface RateLimitBook {
  blocked(route: string): RouteBlock;
  /** Records what an answer on `route` said at `now`; `note` says why it waits, when it does. */
  record(route: string, info: RateLimitInfo, now: number, note?: string): void;
}

/** Creates an empty {@link RateLimitBook}. */
export function createRateLimitBook(): RateLimitBook {
  const bucketOf = new Map<string, string>();
  const blocks = new Map<string, RouteBlock>();
  let global: RouteBlock = { until: 0, note: undefined };
  const keyOf = (route: string) => bucketOf.get(route) ?? `route:${route}`;
  return {
    blocked(route) {
      const own = blocks.get(keyOf(route)) ?? { until: 0, note: undefined };
      return global.until > own.until ? global : own;
    },
    record(route, info, now, note) {
      if (info.bucket !== undefined) bucketOf.set(route, `bucket:${info.bucket}`);
      if (info.global) {
        if (now + info.waitMs > global.until) global = { until: now + info.waitMs, note };
        return;
      }
      // An answer with requests left clears the bucket's wait: the limit has been reset.
      blocks.set(keyOf(route), info.waitMs > 0 ? { until: now + info.waitMs, note } : { until: 0, note: undefined });
    },
  };
}
