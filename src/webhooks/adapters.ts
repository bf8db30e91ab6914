/**
 * Webhook handlers for people who already run Express or Fastify: one shared core
 * ({@link handleWebhookDelivery}) and a thin adapter per framework, the way octokit/webhooks.js
 * keeps one middleware core beside per-runtime adapters. Only structural types of the frameworks
 * are used, so neither is loaded at run time (both stay optional for users).
 *
 * Express (mount `express.raw` on the route, so the exact bytes reach the handler):
 * ```ts
 * app.post('/webhooks', express.raw({ type: 'application/json' }), expressWebhookHandler({ secrets, onEvent }));
 * ```
 * Without a raw parser the handler reads the body from the request stream itself; behind
 * `express.json()` the bytes are gone and every delivery is answered 500 (and `onError` says why).
 *
 * Fastify (a scope whose JSON parser keeps the body as a Buffer):
 * ```ts
 * app.register(async (scope) => {
 *   scope.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
 *   scope.post('/webhooks', fastifyWebhookHandler({ secrets, onEvent }));
 * });
 * ```
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { WebhookEvent } from './events.js';
import { verifySignedDelivery } from './receiver-core.js';
import type { VerifyFailure } from './verify.js';

/** What {@link WebhookHandlerOptions.onEvent} learns besides the event. */
export interface DeliveryContext {
  /** `t` of the signature, Unix seconds. */
  timestamp: number;
  /** `x-topgg-trace`, when sent. */
  traceId: string | undefined;
}

/** Options of {@link expressWebhookHandler} and {@link fastifyWebhookHandler}. */
export interface WebhookHandlerOptions {
  /**
   * The accepted webhook secrets (several during a rotation), or a function read on every
   * delivery, so a rotation takes effect without rebuilding the handler.
   */
  secrets: readonly string[] | (() => readonly string[]);
  /**
   * Called with each verified event, and awaited: the answer waits for it, and a rejection is
   * answered 500 (the service retries). Keep it well under the service's 5 s deadline (record the
   * event, work later). Resolve with a value to answer 200 with that value as JSON: an
   * `integration.create` needs `{ webhook_url, routes: ['vote.create'] }`. Otherwise 204.
   * Retries repeat a delivery: deduplicate on `data.id` of `vote.create`.
   */
  onEvent: (event: WebhookEvent, context: DeliveryContext) => unknown;
  /** Seconds `t` may be from the clock, both directions. Default 300. */
  toleranceSeconds?: number;
  /** The clock, epoch milliseconds. Default `Date.now`. */
  now?: () => number;
  /** Largest body read from the request stream (Express without a raw parser). Default 65,536 bytes; above is 413. */
  maxBodyBytes?: number;
  /**
   * Told about refusals (with their reason, never a secret or a signature), `onEvent` failures and
   * misconfigurations, for logs and metrics. Default: nothing. Its own exceptions are ignored.
   */
  onError?: (problem: WebhookProblem) => void;
}

/** A delivery that did not end in `onEvent` resolving. */
export type WebhookProblem =
  | { kind: 'rejected'; reason: VerifyFailure | 'too_large'; status: number }
  | { kind: 'handler_failed'; error: unknown }
  | { kind: 'misconfigured'; message: string };

/** An answer to send: a status and, for 200, a JSON body. */
export interface WebhookAnswer {
  status: number;
  body?: string;
}

/** Default of {@link WebhookHandlerOptions.maxBodyBytes}: 64 KiB, the receiver's cap. */
const DEFAULT_MAX_BODY_BYTES = 64 * 1024;

function report(options: WebhookHandlerOptions, problem: WebhookProblem): void {
  try {
    options.onError?.(problem);
  } catch {
    // A failing logger must not turn a clean refusal into a crash.
  }
}

/**
 * The framework-free core: verifies one delivery, calls `onEvent` and says what to answer
 * (204, 200 with JSON, 400, 401 or 500). Never throws.
 */
export async function handleWebhookDelivery(
  rawBody: Uint8Array | string,
  headers: IncomingHttpHeaders,
  options: WebhookHandlerOptions,
): Promise<WebhookAnswer> {
  let result;
  try {
    const secrets = typeof options.secrets === 'function' ? options.secrets() : options.secrets;
    const now = options.now ? options.now() : Date.now();
    // The receiver's own verification (receiver-core.ts): one rule for every way in.
    result = verifySignedDelivery(rawBody, headers, secrets, now, options.toleranceSeconds);
  } catch (error) {
    // Only a throwing `secrets` or `now` gets here: the user's code, so it is theirs to see.
    report(options, { kind: 'handler_failed', error });
    return { status: 500 };
  }
  if (!result.ok) {
    report(options, { kind: 'rejected', reason: result.reason, status: result.status });
    return { status: result.status };
  }
  try {
    const value: unknown = await options.onEvent(result.event, { timestamp: result.timestamp, traceId: result.traceId });
    if (value === undefined) return { status: 204 };
    return { status: 200, body: JSON.stringify(value) };
  } catch (error) {
    report(options, { kind: 'handler_failed', error });
    return { status: 500 };
  }
}

/** Reads a request stream up to `limit` bytes; `undefined` when it is larger or fails. */
function readStream(req: IncomingMessage, limit: number): Promise<Buffer | 'too_large' | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const declared = Number(req.headers['content-length']);
    // A declared length above the cap is refused before one byte is buffered.
    if (Number.isFinite(declared) && declared > limit) return resolve('too_large');
    const done = (value: Buffer | 'too_large' | undefined) => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onFail);
      req.off('aborted', onFail);
      resolve(value);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) done('too_large');
      else chunks.push(chunk);
    };
    const onEnd = () => done(Buffer.concat(chunks, size));
    const onFail = () => done(undefined);
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onFail);
    req.on('aborted', onFail);
  });
}

function send(res: ServerResponse, answer: WebhookAnswer, close = false): void {
  if (res.headersSent || res.writableEnded) return;
  const headers: Record<string, string> = answer.body === undefined ? {} : { 'content-type': 'application/json' };
  // After a refused oversized body the rest of it is unread: close rather than drain it.
  if (close) headers.connection = 'close';
  res.writeHead(answer.status, headers).end(answer.body);
}

/** The request an Express handler gets, as far as this adapter needs it. */
export type ExpressLikeRequest = IncomingMessage & { body?: unknown };

/**
 * An Express request handler (`(req, res) => void`) for signed deliveries. It takes the raw body
 * from `req.body` when it is a Buffer (mount `express.raw({ type: 'application/json' })` on the
 * route) or a string, else reads it from the request stream (up to `maxBodyBytes`, else 413).
 * Answers 204 (or 200 with `onEvent`'s value as JSON), 401 for a signature or time problem, 400
 * for a validly signed body that is not a known event, 500 when `onEvent` throws or the body was
 * already parsed by another middleware. Answers carry no details; `onError` gets them.
 */
export function expressWebhookHandler(options: WebhookHandlerOptions): (req: ExpressLikeRequest, res: ServerResponse) => void {
  const limit = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  return (req, res) => {
    void (async () => {
      const body = req.body;
      let raw: Uint8Array | string;
      if (body instanceof Uint8Array || typeof body === 'string') {
        raw = body;
      } else if (req.readableEnded || (body !== undefined && body !== null)) {
        report(options, {
          kind: 'misconfigured',
          message:
            'the request body was already parsed, so its exact bytes are gone: ' +
            "mount express.raw({ type: 'application/json' }) on the webhook route instead of express.json()",
        });
        return send(res, { status: 500 });
      } else {
        const read = await readStream(req, limit);
        if (read === undefined) return; // The client went away: nobody to answer.
        if (read === 'too_large') {
          report(options, { kind: 'rejected', reason: 'too_large', status: 413 });
          return send(res, { status: 413 }, true);
        }
        raw = read;
      }
      send(res, await handleWebhookDelivery(raw, req.headers, options));
    })().catch(() => send(res, { status: 500 }));
  };
}

/**
 * A `node:http` request listener for signed deliveries, for a bot that runs its own
 * `http.createServer`: `createServer(nodeWebhookHandler({ secrets, onEvent }))`, or called from
 * its own listener for the webhook path. It reads the raw body from the request (up to
 * `maxBodyBytes`, default 64 KiB, else 413) and answers as {@link expressWebhookHandler} does.
 */
export function nodeWebhookHandler(options: WebhookHandlerOptions): (req: IncomingMessage, res: ServerResponse) => void {
  // Express's request is node's with an optional parsed body; without one the stream is read.
  return expressWebhookHandler(options);
}

/** The request a Fastify handler gets, as far as this adapter needs it. */
export interface FastifyLikeRequest {
  body: unknown;
  headers: IncomingHttpHeaders;
}

/** The reply of a Fastify handler, as far as this adapter needs it. */
export interface FastifyLikeReply {
  code(statusCode: number): FastifyLikeReply;
  header(name: string, value: string): FastifyLikeReply;
  send(payload?: unknown): FastifyLikeReply;
}

/**
 * A Fastify route handler for signed deliveries. The route's content type parser must keep the
 * raw body: `addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) =>
 * done(null, body))` in the route's scope (see the module comment); Fastify's `bodyLimit`
 * (default 1 MiB) caps the body. Answers as {@link expressWebhookHandler}; a body that Fastify
 * already parsed into an object is answered 500 (and `onError` says why).
 */
export function fastifyWebhookHandler(
  options: WebhookHandlerOptions,
): (request: FastifyLikeRequest, reply: FastifyLikeReply) => Promise<FastifyLikeReply> {
  return async (request, reply) => {
    const body = request.body;
    let answer: WebhookAnswer;
    if (body instanceof Uint8Array || typeof body === 'string') {
      answer = await handleWebhookDelivery(body, request.headers, options);
    } else if (body === undefined || body === null) {
      // No body at all (no content type): verify the empty bytes, which a signature may cover.
      answer = await handleWebhookDelivery('', request.headers, options);
    } else {
      report(options, {
        kind: 'misconfigured',
        message:
          'the request body was parsed as JSON, so its exact bytes are gone: ' +
          "add a content type parser with { parseAs: 'buffer' } for application/json in the webhook route's scope",
      });
      answer = { status: 500 };
    }
    reply.code(answer.status);
    if (answer.body === undefined) return reply.send();
    return reply.header('content-type', 'application/json').send(answer.body);
  };
}
