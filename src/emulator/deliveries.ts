import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { randomUUID } from 'node:crypto';
import { signDelivery } from '../contract/signature.js';
import type { EmulatorClock } from './clock.js';
import type { EmulatorSettings } from './settings.js';
import type { DeliveryAttempt, DeliveryRecord, EmulatorState } from './state.js';
import { iso } from './clock.js';

/** Where a delivery goes and how it is signed. */
export interface DeliveryTarget {
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

/** Creates the delivery service over the emulator's state, clock and settings. */
export function createDeliveryService(state: EmulatorState, clock: EmulatorClock, settings: EmulatorSettings): DeliveryService {
  const inFlight = new Set<Promise<unknown>>();
  /** Waiting retries: each timer with the resolver that wakes its delivery on close. */
  const timers = new Map<NodeJS.Timeout, () => void>();
  const controllers = new Set<AbortController>();
  let closed = false;

  function attempt(target: DeliveryTarget, rawBody: string, traceId: string): Promise<AttemptResult & { duration_ms: number }> {
    const started = Date.now();
    const headers = {
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      'content-length': String(Buffer.byteLength(rawBody)),
      ...signDelivery({ secret: target.secret, rawBody, timestampSeconds: Math.floor(clock.now() / 1000), traceId }),
    };
    let url: URL;
    try {
      url = new URL(target.url);
    } catch {
      return Promise.resolve({ status: null, body: undefined, error: 'invalid URL', duration_ms: 0 });
    }
    const controller = new AbortController();
    controllers.add(controller);
    return new Promise((resolve) => {
      const deadline = setTimeout(() => controller.abort(), settings.deliveryTimeoutMs);
      deadline.unref();
      const finish = (result: AttemptResult) => {
        clearTimeout(deadline);
        controllers.delete(controller);
        resolve({ ...result, duration_ms: Date.now() - started });
      };
      const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
      const req = send(url, { method: 'POST', headers, signal: controller.signal, agent: false }, (res) => {
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
          finish({ status: res.statusCode ?? null, body, error: null });
        });
        res.on('error', (error) => finish({ status: null, body: undefined, error: error.message }));
      });
      req.on('error', (error) => {
        const timedOut = controller.signal.aborted;
        finish({ status: null, body: undefined, error: timedOut ? `no answer within ${settings.deliveryTimeoutMs} ms` : error.message });
      });
      req.end(rawBody);
    });
  }

  function currentTarget(target: DeliveryTarget): DeliveryTarget | undefined {
    if (target.webhook_id === null) return target;
    const webhook = state.webhooks.get(target.webhook_id);
    return webhook && { ...target, url: webhook.url, secret: webhook.secret };
  }

  function newRecord(target: DeliveryTarget, type: string, data: unknown): DeliveryRecord {
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
    state.deliveries.push(record);
    return record;
  }

  async function tryOnce(record: DeliveryRecord, target: DeliveryTarget, rawBody: string): Promise<AttemptResult> {
    const at = iso(clock.now());
    const result = await attempt(target, rawBody, record.trace_id);
    const entry: DeliveryAttempt = { at, status: result.status, error: result.error, duration_ms: result.duration_ms };
    record.attempts.push(entry);
    return result;
  }

  const wait = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        resolve();
      }, ms);
      timer.unref();
      timers.set(timer, resolve);
    });

  function track<T>(promise: Promise<T>): Promise<T> {
    inFlight.add(promise);
    void promise.finally(() => inFlight.delete(promise)).catch(() => undefined);
    return promise;
  }

  return {
    deliver(target, type, data) {
      const record = newRecord(target, type, data);
      const rawBody = JSON.stringify(record.body);
      return track(
        (async () => {
          for (let retry = 0; ; retry += 1) {
            if (closed) break;
            // A webhook rotated or deleted between tries: sign with the current secret, or stop.
            const current = currentTarget(target);
            if (!current) break;
            const result = await tryOnce(record, current, rawBody);
            if (result.status !== null && result.status >= 200 && result.status < 300) {
              record.outcome = 'delivered';
              return record;
            }
            const final = result.status !== null && result.status >= 400 && result.status < 500;
            const delay = settings.deliveryRetryDelaysMs[retry];
            if (final || delay === undefined || closed) break;
            await wait(delay);
          }
          record.outcome = 'failed';
          return record;
        })(),
      );
    },
    sendOnce(target, type, data) {
      const record = newRecord(target, type, data);
      return track(
        (async () => {
          const result = await tryOnce(record, target, JSON.stringify(record.body));
          record.outcome = result.status !== null && result.status >= 200 && result.status < 300 ? 'delivered' : 'failed';
          return { record, result };
        })(),
      );
    },
    async idle() {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
    close() {
      closed = true;
      for (const [timer, wake] of timers) {
        clearTimeout(timer);
        wake();
      }
      timers.clear();
      for (const controller of controllers) controller.abort();
    },
  };
}
