import { setTimeout as delay } from 'node:timers/promises';
import type { Dispatcher } from 'undici';
import { CLIENT_VERSION } from './version.js';
import type { ApiFamily, ProblemDetails } from './errors.js';
import { createApiError, NetworkError, TimeoutError } from './errors.js';
import { redact, redactUrl } from './redact.js';
import {
  type AttemptOutcome,
  DEFAULT_RETRY_POLICY,
  decideRetry,
  parseRetryAfter,
  retryAfterFromV0Body,
  type RetryPolicy,
} from './retry.js';
import { timerDelay } from '../contract/timer-delay.js';

/** Time as the transport sees it; injected in tests so waits need no real sleeping. */
export interface TransportClock {
  now(): number;
  /** Waits `ms`; rejects with the signal's reason when it aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** The real clock. */
export const systemClock: TransportClock = {
  now: () => Date.now(),
  // `timers/promises` rejects with its own AbortError; callers are promised the signal's reason.
  sleep: (ms, signal) =>
    delay(timerDelay(ms), undefined, signal ? { signal } : {}).catch((error: unknown) => {
      throw signal?.aborted ? signal.reason : error;
    }),
};

/**
 * Waits on `clock`, but stops the moment `signal` aborts, with its reason: an injected clock may
 * ignore the signal, and an abort must never wait out a retry delay.
 */
function sleepUnlessAborted(clock: TransportClock, ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return clock.sleep(ms);
  signal.throwIfAborted();
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    clock.sleep(ms, signal).then(
      () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(signal.aborted ? signal.reason : error);
      },
    );
  });
}

/** A retry about to happen, for logs and metrics. */
export interface RetryEvent {
  method: string;
  /** Redacted. */
  url: string;
  /** The attempt that failed, from 1. */
  attempt: number;
  delayMs: number;
  reason: string;
}

/** Options of {@link createTransport}. */
export interface TransportOptions {
  /**
   * The undici dispatcher (an `Agent` of undici 6.27+ or 7). Default: a keep-alive `Agent` owned
   * (and closed) by the transport.
   */
  dispatcher?: Dispatcher;
  /** Per-attempt timeout for the answer's headers and body. Default 15 000 ms. */
  timeoutMs?: number;
  /** Retry policy; see {@link RetryPolicy} for defaults. */
  retry?: Partial<RetryPolicy>;
  /** `User-Agent`. Default `listing-agent/<version> (+https://www.npmjs.com/package/listing-agent)`. */
  userAgent?: string;
  /** Default: the system clock. */
  clock?: TransportClock;
  /** Randomness for jitter, [0, 1). Default `Math.random`. */
  random?: () => number;
  /** Called before each retry wait. */
  onRetry?: (event: RetryEvent) => void;
}

/** One call as the API modules describe it. */
export interface TransportRequest {
  family: ApiFamily;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url: string;
  headers?: Record<string, string>;
  /** Sent as JSON. */
  json?: unknown;
  /** Sent as `application/x-www-form-urlencoded`. */
  form?: Record<string, string>;
  /** May the call be sent again after it may have reached the service (GET, PUT, PATCH, DELETE, batch)? */
  idempotent: boolean;
  /** Values removed from every error message and URL (tokens, secrets). */
  secrets: readonly string[];
  signal?: AbortSignal | undefined;
  timeoutMs?: number | undefined;
}

/** A 2xx answer. */
export interface TransportResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** Parsed JSON, or undefined for an empty body. */
  body: unknown;
}

/** Sends calls with timeouts, retries and the error family. */
export interface Transport {
  send(request: TransportRequest): Promise<TransportResponse>;
  /** Closes the dispatcher when the transport created it. */
  close(): Promise<void>;
}

/** The default `User-Agent`. */
export const DEFAULT_USER_AGENT = `listing-agent/${CLIENT_VERSION} (+https://www.npmjs.com/package/listing-agent)`;

/** Error codes meaning the request never left this machine, so any call may be sent again. */
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT', 'EHOSTUNREACH', 'ENETUNREACH']);

/**
 * Error codes no retry can mend: the dispatcher is closed or destroyed (after `close()`), or undici
 * refused the request's own arguments. Retrying them would only add backoff waits before the error.
 */
const FINAL_CODES = new Set(['UND_ERR_CLOSED', 'UND_ERR_DESTROYED', 'UND_ERR_INVALID_ARG', 'UND_ERR_NOT_SUPPORTED']);

function errorCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current instanceof Error; depth += 1) {
    const code = (current as NodeJS.ErrnoException).code;
    if (code && code !== 'UND_ERR_SOCKET') return code;
    // Happy-eyeballs connects may fail with an AggregateError of the per-address errors.
    const first: unknown = current instanceof AggregateError ? (current.errors as unknown[])[0] : undefined;
    current = current.cause ?? first;
  }
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

function header(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function parseBody(text: string, contentType: string | undefined): unknown {
  if (text === '') return undefined;
  if (contentType?.includes('json') || /^[[{]/.test(text.trimStart())) {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  return text;
}

function errorFields(family: ApiFamily, body: unknown, secrets: readonly string[]) {
  if (typeof body !== 'object' || body === null) {
    return typeof body === 'string' && body.length > 0 && body.length < 300 ? { error: redact(body, secrets) } : {};
  }
  const record = body as Record<string, unknown>;
  const text = (key: string) => (typeof record[key] === 'string' ? redact(record[key] as string, secrets) : undefined);
  if (family === 'v1' && typeof record.status === 'number') {
    const problem: ProblemDetails = {
      type: text('type') ?? 'about:blank',
      title: text('title') ?? '',
      status: record.status,
      detail: text('detail') ?? '',
    };
    return { problem };
  }
  const error = text('error');
  const errorDescription = text('error_description');
  return { ...(error !== undefined ? { error } : {}), ...(errorDescription !== undefined ? { errorDescription } : {}) };
}

/** What a transport sends with: its dispatcher and the options with their defaults. */
interface TransportState {
  /**
   * The dispatcher: the caller's, or the transport's own keep-alive `Agent` made at the first
   * request, when undici is loaded (a bot that imports the package and never sends pays nothing).
   */
  dispatcher: Dispatcher | undefined;
  readonly ownsDispatcher: boolean;
  readonly policy: RetryPolicy;
  readonly clock: TransportClock;
  readonly random: () => number;
  readonly userAgent: string;
  readonly defaultTimeoutMs: number;
  readonly onRetry: ((event: RetryEvent) => void) | undefined;
  closing: Promise<void> | undefined;
}

/** One try's result: an answer (any status), a timeout, or a network error (sent or not, final or not). */
type AttemptResult =
  | TransportResponse
  | { timedOut: true; error: unknown }
  | { networkError: unknown; sent: boolean; final: boolean };

/** The headers and body of `req` as sent (a caller's header replaces ours, whatever its case). */
function encodeRequest(state: TransportState, req: TransportRequest): { headers: Record<string, string>; body: string | undefined } {
  const headers: Record<string, string> = { 'user-agent': state.userAgent, accept: 'application/json' };
  // Lower-cased, so a caller's `User-Agent` replaces ours instead of being sent beside it.
  for (const [name, value] of Object.entries(req.headers ?? {})) headers[name.toLowerCase()] = value;
  let body: string | undefined;
  if (req.json !== undefined) {
    body = JSON.stringify(req.json);
    headers['content-type'] = 'application/json';
  } else if (req.form !== undefined) {
    body = new URLSearchParams(req.form).toString();
    headers['content-type'] = 'application/x-www-form-urlencoded';
  }
  return { headers, body };
}

/**
 * Closes a dispatcher the transport made. Bun's stand-in for undici has an `Agent` with no methods
 * (its requests go through Bun's own fetch pool, which needs no closing): nothing to close there.
 */
function closeDispatcher(dispatcher: Dispatcher): Promise<void> {
  return typeof dispatcher.close === 'function' ? dispatcher.close() : Promise.resolve();
}

/** The error of a call sent after `close()`, the same on every runtime (undici's code for it). */
function closedError(): Error {
  return Object.assign(new Error('the client was closed'), { code: 'UND_ERR_CLOSED' });
}

/** Sends `req` once, within `timeoutMs`; throws only the caller's abort reason. */
async function attempt(state: TransportState, req: TransportRequest, timeoutMs: number): Promise<AttemptResult> {
  // The bot's undici when it has one that fits our range (discord.js 14 brings 6, npm keeps it for
  // us), else ours (7): only what both majors do alike is used here (test/integration/client/undici-*).
  const undici = await import('undici');
  // undici refuses a closed Agent by itself; Bun's stand-in would send: refuse here, alike. After
  // the import: a close() during the first request's import leaves no Agent to be made.
  if (state.ownsDispatcher && state.closing) return { networkError: closedError(), sent: false, final: true };
  state.dispatcher ??= new undici.Agent({ keepAliveTimeout: 10_000, connections: 16 });
  const { headers, body } = encodeRequest(state, req);
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(), timerDelay(timeoutMs));
  const signal = req.signal ? AbortSignal.any([req.signal, timeout.signal]) : timeout.signal;
  try {
    const res = await undici.request(req.url, {
      dispatcher: state.dispatcher,
      method: req.method,
      headers,
      body,
      signal,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    const text = await res.body.text();
    return { status: res.statusCode, headers: res.headers, body: parseBody(text, header(res.headers, 'content-type')) };
  } catch (error) {
    if (req.signal?.aborted) throw req.signal.reason;
    const code = errorCode(error);
    if (timeout.signal.aborted || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
      return { timedOut: true, error };
    }
    return { networkError: error, sent: !NOT_SENT_CODES.has(code ?? ''), final: FINAL_CODES.has(code ?? '') };
  } finally {
    clearTimeout(timer);
  }
}

/** The error a call ends with when no retry follows `result` (not a 2xx). */
function finalError(
  req: TransportRequest,
  result: AttemptResult,
  outcome: AttemptOutcome,
  context: { url: string; attempts: number; timeoutMs: number },
): Error {
  const { url, attempts, timeoutMs } = context;
  if ('timedOut' in result) return new TimeoutError(req.method, url, timeoutMs, attempts, result.error, req.secrets);
  if ('networkError' in result) return new NetworkError(req.method, url, attempts, result.networkError, req.secrets);
  return createApiError({
    status: result.status,
    method: req.method,
    url,
    family: req.family,
    attempts,
    ...(outcome.kind === 'response' && outcome.retryAfterMs !== undefined ? { retryAfterMs: outcome.retryAfterMs } : {}),
    ...errorFields(req.family, result.body, req.secrets),
    secrets: req.secrets,
  });
}

/** Sends `req`, retrying as the policy says; resolves with the first 2xx answer. */
async function send(state: TransportState, req: TransportRequest): Promise<TransportResponse> {
  const timeoutMs = req.timeoutMs ?? state.defaultTimeoutMs;
  const shownUrl = redactUrl(req.url, req.secrets);
  for (let attemptNo = 1; ; attemptNo += 1) {
    req.signal?.throwIfAborted();
    const result = await attempt(state, req, timeoutMs);
    let outcome: AttemptOutcome;
    if ('timedOut' in result) {
      outcome = { kind: 'timeout' };
    } else if ('networkError' in result) {
      if (result.final) throw new NetworkError(req.method, shownUrl, attemptNo, result.networkError, req.secrets);
      outcome = { kind: 'network', sent: result.sent };
    } else if (result.status >= 200 && result.status < 300) {
      return result;
    } else {
      const retryAfterMs =
        parseRetryAfter(header(result.headers, 'retry-after'), state.clock.now()) ??
        (req.family === 'v0' ? retryAfterFromV0Body(result.body) : undefined);
      outcome = { kind: 'response', status: result.status, retryAfterMs };
    }
    const decision = decideRetry(outcome, { attempt: attemptNo, idempotent: req.idempotent, policy: state.policy, random: state.random });
    if (!decision.retry) throw finalError(req, result, outcome, { url: shownUrl, attempts: attemptNo, timeoutMs });
    state.onRetry?.({ method: req.method, url: shownUrl, attempt: attemptNo, delayMs: decision.delayMs, reason: decision.reason });
    await sleepUnlessAborted(state.clock, decision.delayMs, req.signal);
  }
}

/** Creates a transport. */
export function createTransport(options: TransportOptions = {}): Transport {
  const state: TransportState = {
    dispatcher: options.dispatcher,
    ownsDispatcher: options.dispatcher === undefined,
    policy: { ...DEFAULT_RETRY_POLICY, ...options.retry },
    clock: options.clock ?? systemClock,
    random: options.random ?? Math.random,
    userAgent: options.userAgent ?? DEFAULT_USER_AGENT,
    defaultTimeoutMs: options.timeoutMs ?? 15_000,
    onRetry: options.onRetry,
    closing: undefined,
  };
  return {
    send: (req) => send(state, req),
    async close() {
      // Once only: undici rejects a second close() of the same Agent (ClientDestroyedError), and a
      // client may well be closed twice (an explicit close() and `await using`).
      if (state.ownsDispatcher) await (state.closing ??= state.dispatcher ? closeDispatcher(state.dispatcher) : Promise.resolve());
    },
  };
}
