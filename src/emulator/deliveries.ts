import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { randomUUID } from 'node:crypto';
import { signDelivery } from '../contract/signature.js';
import type { EmulatorClock } from './clock.js';
import type { EmulatorSettings } from './settings.js';
import type { DeliveryAttempt, DeliveryRecord, EmulatorState } from './state.js';
import { iso } from './clock.js';
import { timerDelay } from '../contract/timer-delay.js';

/** Where a delivery goes and how it is signed. */
interface DeliveryTarget {
  url: string;
  secret: string;
  project_id: string;
  webhook_id: string | null;
}

/** The answer of one try. */
export interface AttemptResult {
  status: number | null;
  /** The response body parsed as JSON, or undefined when it was not JSON. */
  body: unknown;
  error: string | null;
}

/** Sends signed events the way decisions.md describes (5 s deadline; retries 1/2/4 s on timeout or 5xx). */
export interface DeliveryService {
  /** Delivers with retries; resolves with the record once it is delivered or has failed. */
  deliver(target: DeliveryTarget, type: string, data: unknown): Promise<DeliveryRecord>;
  /** One try, no retry (test events and integration handshakes). */
  sendOnce(target: DeliveryTarget, type: string, data: unknown): Promise<{ record: DeliveryRecord; result: AttemptResult }>;
  /** Resolves when no delivery is in flight or waiting for a retry. */
  idle(): Promise<void>;
  /** Cancels waiting retries and in-flight tries. */
  close(): void;
}

const USER_AGENT = 'listing-agent-emulator';
const MAX_RESPONSE_BYTES = 64 * 1024;

/** What one answer means for a delivery: done, given up (a 4xx is final), or worth another try. */
export function attemptVerdict(status: number | null): 'delivered' | 'final' | 'retry' {
  if (status !== null && status >= 200 && status < 300) return 'delivered';
  if (status !== null && status >= 400 && status < 500) return 'final';
  return 'retry';
}

/** The delivery service's state: the emulator's pieces, and what is in flight. */
interface Deliveries {
  readonly state: EmulatorState;
  readonly clock: EmulatorClock;
  readonly settings: EmulatorSettings;
  readonly inFlight: Set<Promise<unknown>>;
  /** Waiting retries: each timer with the resolver that wakes its delivery on close. */
  readonly timers: Map<NodeJS.Timeout, () => void>;
  readonly controllers: Set<AbortController>;
  closed: boolean;
}

/** Reads a response body (up to {@link MAX_RESPONSE_BYTES}) as JSON, or undefined when it is not JSON. */
function readJson(res: IncomingMessage, done: (body: unknown) => void, failed: (error: Error) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  res.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size <= MAX_RESPONSE_BYTES) chunks.push(chunk);
  });
  res.on('end', () => {
    let body: unknown;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      body = undefined;
    }
    done(body);
  });
  res.on('error', failed);
}

/** One signed POST of `rawBody` to the target, within the delivery deadline. */
function attempt(
  d: Deliveries,
  target: DeliveryTarget,
  rawBody: string,
  traceId: string,
): Promise<AttemptResult & { duration_ms: number }> {
  const started = Date.now();
  const headers = {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'content-length': String(Buffer.byteLength(rawBody)),
    ...signDelivery({ secret: target.secret, rawBody, timestampSeconds: Math.floor(d.clock.now() / 1000), traceId }),
  };
  let url: URL;
  try {
    url = new URL(target.url);
  } catch {
    return Promise.resolve({ status: null, body: undefined, error: 'invalid URL', duration_ms: 0 });
  }
  const controller = new AbortController();
  d.controllers.add(controller);
  return new Promise((resolve) => {
    const deadline = setTimeout(() => controller.abort(), d.settings.deliveryTimeoutMs);
    deadline.unref();
    const finish = (result: AttemptResult) => {
      clearTimeout(deadline);
      d.controllers.delete(controller);
      resolve({ ...result, duration_ms: Date.now() - started });
    };
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(url, { method: 'POST', headers, signal: controller.signal, agent: false }, (res) => {
      readJson(
        res,
        (body) => finish({ status: res.statusCode ?? null, body, error: null }),
        (error) => finish({ status: null, body: undefined, error: error.message }),
      );
    });
    req.on('error', (error) => {
      const timedOut = controller.signal.aborted;
      finish({ status: null, body: undefined, error: timedOut ? `no answer within ${d.settings.deliveryTimeoutMs} ms` : error.message });
    });
    req.end(rawBody);
  });
}

function currentTarget(d: Deliveries, target: DeliveryTarget): DeliveryTarget | undefined {
  if (target.webhook_id === null) return target;
  const webhook = d.state.webhooks.get(target.webhook_id);
  return webhook && { ...target, url: webhook.url, secret: webhook.secret };
}

function newRecord(d: Deliveries, target: DeliveryTarget, type: string, data: unknown): DeliveryRecord {
  const record: DeliveryRecord = {
    id: randomUUID(),
    trace_id: randomUUID(),
    project_id: target.project_id,
    webhook_id: target.webhook_id,
    url: target.url,
    type,
    body: { type, data },
    attempts: [],
    outcome: 'pending',
  };
  d.state.deliveries.push(record);
  return record;
}

async function tryOnce(d: Deliveries, record: DeliveryRecord, target: DeliveryTarget, rawBody: string): Promise<AttemptResult> {
  const at = iso(d.clock.now());
  const result = await attempt(d, target, rawBody, record.trace_id);
  const entry: DeliveryAttempt = { at, status: result.status, error: result.error, duration_ms: result.duration_ms };
  record.attempts.push(entry);
  return result;
}

/** Waits `ms` for the next try; `close()` wakes it at once. */
function wait(d: Deliveries, ms: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      d.timers.delete(timer);
      resolve();
    }, timerDelay(ms));
    timer.unref();
    d.timers.set(timer, resolve);
  });
}

function track<T>(d: Deliveries, promise: Promise<T>): Promise<T> {
  d.inFlight.add(promise);
  void promise.finally(() => d.inFlight.delete(promise)).catch(() => undefined);
  return promise;
}

/** Tries until delivered, refused for good (4xx), out of retries, or closed. */
async function deliverWithRetries(d: Deliveries, record: DeliveryRecord, target: DeliveryTarget): Promise<DeliveryRecord> {
  const rawBody = JSON.stringify(record.body);
  for (let retry = 0; ; retry += 1) {
    if (d.closed) break;
    // A webhook rotated or deleted between tries: sign with the current secret, or stop.
    const current = currentTarget(d, target);
    if (!current) break;
    const verdict = attemptVerdict((await tryOnce(d, record, current, rawBody)).status);
    if (verdict === 'delivered') {
      record.outcome = 'delivered';
      return record;
    }
    const delay = d.settings.deliveryRetryDelaysMs[retry];
    if (verdict === 'final' || delay === undefined || d.closed) break;
    await wait(d, delay);
  }
  record.outcome = 'failed';
  return record;
}

/** Creates the delivery service over the emulator's state, clock and settings. */
export function createDeliveryService(state: EmulatorState, clock: EmulatorClock, settings: EmulatorSettings): DeliveryService {
  const d: Deliveries = { state, clock, settings, inFlight: new Set(), timers: new Map(), controllers: new Set(), closed: false };
  return {
    deliver: (target, type, data) => track(d, deliverWithRetries(d, newRecord(d, target, type, data), target)),
    sendOnce(target, type, data) {
      const record = newRecord(d, target, type, data);
      return track(
        d,
        (async () => {
          const result = await tryOnce(d, record, target, JSON.stringify(record.body));
          record.outcome = attemptVerdict(result.status) === 'delivered' ? 'delivered' : 'failed';
          return { record, result };
        })(),
      );
    },
    async idle() {
      while (d.inFlight.size > 0) await Promise.allSettled([...d.inFlight]);
    },
    close() {
      d.closed = true;
      for (const [timer, wake] of d.timers) {
        clearTimeout(timer);
        wake();
      }
      d.timers.clear();
      for (const controller of d.controllers) controller.abort();
    },
  };
}
