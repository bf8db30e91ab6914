/**
 * Verification of webhook deliveries as pure functions (decisions.md, "Signed webhook deliveries
 * (v1)" and "Legacy v0 webhooks"), for the receiver and for users who run their own HTTP
 * framework. Nothing here reads a clock, a socket or `process`, and nothing here throws: every
 * input, however hostile, ends in a typed answer.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { DECISION_DEFAULTS, SIGNATURE_HEADER, TRACE_HEADER } from '../contract/limits.js';
import { createdAtProblem, type VoteFieldProblem } from '../contract/vote-fields.js';
import { parseJson, toLegacyVote, toWebhookEvent, type LegacyVote, type WebhookEvent } from './events.js';

export { computeSignature, signDelivery } from '../contract/signature.js';
export {
  type LegacyVote,
} from './events.js';

/** Default tolerance between `t` and the receiver's clock, both directions: 300 s. */
export const DEFAULT_SIGNATURE_TOLERANCE_SECONDS: number = DECISION_DEFAULTS.signatureToleranceSeconds;

/**
 * Why a delivery was refused.
 * - `missing_signature`: no `x-topgg-signature` header (401).
 * - `malformed_signature`: the header is not exactly `t=<digits>,v1=<64 lowercase hex>[,v1=...]`:
 *   empty, no `t`, no `v1`, a second `t`, whitespace, non-hex, wrong length, several headers (401).
 * - `bad_signature`: well formed, but no `v1` matches any configured secret (401).
 * - `stale` / `future`: a valid signature whose `t` is outside the tolerance (401).
 * - `malformed_body`: validly signed, but not UTF-8 JSON `{ type, data }` of the right shape (400).
 * - `unknown_event`: validly signed, well-formed, but a `type` this library does not know (400).
 * - `invalid_vote`: a validly signed `vote.create` whose fields break the contract's rules
 *   (`VOTE_FIELD_LIMITS`): an ID that is not a Snowflake, a weight that is not a whole number from
 *   1 to 10, `created_at` more than 5 minutes ahead of `now` or more than a year before it,
 *   `expires_at` not after `created_at` or more than 7 days after it (400; `problem` says which).
 */
export type VerifyFailure =
  | 'missing_signature'
  | 'malformed_signature'
  | 'bad_signature'
  | 'stale'
  | 'future'
  | 'malformed_body'
  | 'unknown_event'
  | 'invalid_vote';

/** Headers as node's `IncomingHttpHeaders` has them (names lowercase). */
export type WebhookHeaders = Readonly<Record<string, string | string[] | undefined>>;

/** Input of {@link verifyDelivery}. */
export interface VerifyDeliveryOptions {
  /** The exact bytes of the request body, before any JSON parsing. A string is taken as UTF-8. */
  rawBody: Uint8Array | string;
  /** The request headers (node's `req.headers`). */
  headers: WebhookHeaders;
  /** Every secret currently accepted (several during a rotation). Empty strings are ignored. */
  secrets: readonly string[];
  /** The receiver's clock, epoch milliseconds. */
  now: number;
  /**
   * How far `t` may be from `now`, both directions, in seconds. Default 300
   * ({@link DEFAULT_SIGNATURE_TOLERANCE_SECONDS}); a negative or non-finite value means the default.
   */
  toleranceSeconds?: number;
}

/** An accepted delivery. */
export interface VerifiedDelivery {
  ok: true;
  event: WebhookEvent;
  /** `t` of the signature, Unix seconds. */
  timestamp: number;
  /** `x-topgg-trace`, when present and printable (at most 200 characters). */
  traceId: string | undefined;
}

/** A refused delivery: answer `status` with no details (the reason is for logs and metrics). */
export interface RejectedDelivery {
  ok: false;
  reason: VerifyFailure;
  status: 400 | 401;
  /** For `invalid_vote`: the field and the rule it breaks (its message quotes a short, printable excerpt of the value). */
  problem?: VoteFieldProblem;
}

/** The answer of {@link verifyDelivery}. */
export type VerifyResult = VerifiedDelivery | RejectedDelivery;

/** A parsed `x-topgg-signature` header. */
export interface ParsedSignatureHeader {
  /** `t` exactly as sent: the HMAC covers these characters. */
  timestampText: string;
  timestamp: number;
  /** Every `v1` entry, each 32 bytes. */
  signatures: Buffer[];
}

/** More entries than any rotation needs; bounds the work one request can cause. */
const MAX_HEADER_ENTRIES = 8;
/** `t=` + 12 digits + 8 × `,v1=` + 64 hex, rounded up: longer is not a header we made. */
const MAX_HEADER_LENGTH = 1_024;
const MAX_TRACE_LENGTH = 200;
/** One entry: a lowercase key, `=`, a value with no whitespace, comma or `=` (the whitespace tricks). */
const ENTRY = /^([a-z][a-z0-9]*)=([^\s,=]*)$/;
/** Unix seconds without sign, fraction or leading zero (so one instant has one spelling). */
const TIMESTAMP = /^(?:0|[1-9]\d{0,11})$/;
const HEX_SHA256 = /^[0-9a-f]{64}$/;
const PRINTABLE = /^[\x21-\x7e]+$/;

const rejected = (reason: VerifyFailure, status: 400 | 401 = 401, problem?: VoteFieldProblem): RejectedDelivery =>
  problem === undefined ? { ok: false, reason, status } : { ok: false, reason, status, problem };

/**
 * Parses `t=<unix seconds>,v1=<hex>[,v1=<hex>...]`. Strict: one `t`, at least one `v1`, no
 * whitespace anywhere, lowercase hex of exactly 64 characters. Unknown keys (a future `v2`) are
 * skipped so a new scheme can be added beside `v1`. Undefined when malformed; never throws.
 */
export function parseSignatureHeader(header: string): ParsedSignatureHeader | undefined {
  if (header.length === 0 || header.length > MAX_HEADER_LENGTH) return undefined;
  const parts = header.split(',');
  if (parts.length > MAX_HEADER_ENTRIES + 1) return undefined;
  let timestampText: string | undefined;
  const signatures: Buffer[] = [];
  for (const part of parts) {
    const match = ENTRY.exec(part);
    if (!match) return undefined;
    const [, key, value = ''] = match;
    if (key === 't') {
      // A second `t` could make a signature over one time pass a window check on another.
      if (timestampText !== undefined || !TIMESTAMP.test(value)) return undefined;
      timestampText = value;
    } else if (key === 'v1') {
      if (!HEX_SHA256.test(value)) return undefined;
      signatures.push(Buffer.from(value, 'hex'));
    }
  }
  if (timestampText === undefined || signatures.length === 0) return undefined;
  return { timestampText, timestamp: Number(timestampText), signatures };
}

/**
 * Compares two digests in constant time. `timingSafeEqual` throws on buffers of different lengths
 * (the bug that let one short signature kill other receivers), so a wrong length compares the
 * expected digest with itself, to spend the same time, and then fails on the length check.
 */
function digestsEqual(expected: Buffer, candidate: Buffer): boolean {
  const sameLength = candidate.length === expected.length;
  const equal = timingSafeEqual(expected, sameLength ? candidate : expected);
  return sameLength && equal;
}

/** Whether any `v1` entry matches any secret; tries every pair so the time says nothing of which. */
function anySignatureMatches(parsed: ParsedSignatureHeader, rawBody: Uint8Array | string, secrets: readonly string[]): boolean {
  let matched = false;
  for (const secret of secrets) {
    // An empty secret would let anyone sign: a configuration slip must not open the door.
    if (typeof secret !== 'string' || secret.length === 0) continue;
    const expected = createHmac('sha256', secret).update(`${parsed.timestampText}.`).update(rawBody).digest();
    for (const candidate of parsed.signatures) {
      if (digestsEqual(expected, candidate)) matched = true;
    }
  }
  return matched;
}

/** One header value: several headers of the same name (an array, or node's `a, b` join) are refused. */
function singleHeader(headers: WebhookHeaders, name: string): string | string[] | undefined {
  const value = headers[name];
  if (value !== undefined) return value;
  // Names should be lowercase already (node does it); a hand-built object may not be.
  for (const key of Object.keys(headers)) {
    if (key.toLowerCase() === name) return headers[key];
  }
  return undefined;
}

function traceOf(headers: WebhookHeaders): string | undefined {
  const value = singleHeader(headers, TRACE_HEADER);
  const trace = Array.isArray(value) ? value[0] : value;
  // The trace goes into logs: only short printable ASCII, so it cannot forge log lines.
  return typeof trace === 'string' && trace.length <= MAX_TRACE_LENGTH && PRINTABLE.test(trace) ? trace : undefined;
}

function effectiveTolerance(toleranceSeconds: number | undefined): number {
  return typeof toleranceSeconds === 'number' && Number.isFinite(toleranceSeconds) && toleranceSeconds >= 0
    ? toleranceSeconds
    : DEFAULT_SIGNATURE_TOLERANCE_SECONDS;
}

function verifyUnsafe(options: VerifyDeliveryOptions): VerifyResult {
  const { rawBody, headers, secrets, now } = options;
  if (typeof headers !== 'object' || headers === null) return rejected('missing_signature');
  const header = singleHeader(headers, SIGNATURE_HEADER);
  if (header === undefined || (Array.isArray(header) && header.length === 0)) return rejected('missing_signature');
  if (typeof header !== 'string' && !(Array.isArray(header) && header.length === 1)) return rejected('malformed_signature');
  const text = typeof header === 'string' ? header : header[0];
  const parsed = typeof text === 'string' ? parseSignatureHeader(text) : undefined;
  if (!parsed) return rejected('malformed_signature');
  if (typeof rawBody !== 'string' && !(rawBody instanceof Uint8Array)) return rejected('bad_signature');
  if (!Array.isArray(secrets) || !anySignatureMatches(parsed, rawBody, secrets)) return rejected('bad_signature');

  // Time after the signature, so that `stale` and `future` mean "really signed, wrong time" (a
  // replay or a skewed clock) rather than anything a stranger can provoke.
  const toleranceMs = effectiveTolerance(options.toleranceSeconds) * 1000;
  const skewMs = parsed.timestamp * 1000 - now;
  // Written so that a NaN `now` fails the window instead of passing it.
  if (!(Math.abs(skewMs) <= toleranceMs)) return rejected(skewMs > 0 ? 'future' : 'stale');

  // JSON only now: nothing of an unsigned body is ever parsed.
  const json = parseJson(rawBody);
  if (!json) return rejected('malformed_body', 400);
  const checked = toWebhookEvent(json.value);
  if (!checked.ok) return rejected(checked.reason, 400, checked.problem);
  const { event } = checked;
  // A vote's time against the clock: a key dated in year +275760 would be kept for ever.
  const late = event.type === 'vote.create' ? createdAtProblem('data.created_at', Date.parse(event.data.created_at), now) : undefined;
  if (late !== undefined) return rejected('invalid_vote', 400, late);
  return { ok: true, event, timestamp: parsed.timestamp, traceId: traceOf(headers) };
}

/**
 * Verifies a signed (v1) delivery exactly as decisions.md says: `x-topgg-signature:
 * t=<unix seconds>,v1=<hex>`, the hex HMAC-SHA256 of `<t>.<raw body>`; accepted when any `v1`
 * entry matches any of `secrets` (compared in constant time) and `t` is within `toleranceSeconds`
 * (default 300) of `now`, both directions. The body is parsed as JSON only after the signature
 * holds. Never throws: a refusal carries a {@link VerifyFailure} and the status to answer (401 for
 * signature and time, 400 for a validly signed body that is not a known event).
 *
 * @example
 * const result = verifyDelivery({ rawBody, headers: req.headers, secrets: [secret], now: Date.now() });
 * if (!result.ok) return res.writeHead(result.status).end();
 */
export function verifyDelivery(options: VerifyDeliveryOptions): VerifyResult {
  try {
    return verifyUnsafe(options);
  } catch {
    // Only reachable from hostile JS callers (a throwing getter on `headers`): refuse, never crash.
    return rejected('malformed_signature');
  }
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/**
 * Checks a legacy (v0) `Authorization: <secret>` header (the raw secret, no scheme word) against
 * any of `secrets`. Constant time: both sides are hashed to 32 bytes first, so neither the length
 * nor the content of a secret shows in the time taken. `undefined`, an empty header or an empty
 * secret never match. Never throws.
 */
export function verifyLegacyAuthorization(header: string | undefined, secrets: readonly string[]): boolean {
  try {
    if (typeof header !== 'string' || header.length === 0 || !Array.isArray(secrets)) return false;
    const presented = sha256(header);
    let matched = false;
    for (const secret of secrets) {
      if (typeof secret !== 'string' || secret.length === 0) continue;
      if (timingSafeEqual(presented, sha256(secret))) matched = true;
    }
    return matched;
  } catch {
    return false;
  }
}

/** Why a legacy body was refused (answer 400); `invalid_vote`: an upvote whose IDs are not Snowflakes. */
export type LegacyVoteFailure = 'malformed_body' | 'unknown_event' | 'invalid_vote';

/**
 * Parses a legacy (v0) vote body: `{ bot | guild, user, type: 'upvote' | 'test', isWeekend?,
 * query? }`. Check {@link verifyLegacyAuthorization} first. Extra fields are dropped. Never throws.
 */
export function parseLegacyVote(
  rawBody: Uint8Array | string,
): { ok: true; vote: LegacyVote } | { ok: false; reason: LegacyVoteFailure; problem?: VoteFieldProblem } {
  if (typeof rawBody !== 'string' && !(rawBody instanceof Uint8Array)) return { ok: false, reason: 'malformed_body' };
  const json = parseJson(rawBody);
  if (!json) return { ok: false, reason: 'malformed_body' };
  return toLegacyVote(json.value);
}
