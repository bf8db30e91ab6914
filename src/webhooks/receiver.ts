import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ListingAgentConfig } from '../config/schema.js';
import { projectTokenPlatformId } from '../contract/project-token.js';
import { errorMessage, ListingAgentError } from '../errors.js';
import type { ListenAddress, ListenSetting } from '../http/listen-error.js';
import { createLocalServer, type LocalServerStopOptions, type LocalServerTimeouts } from '../http/local-server.js';
import { readBody } from '../http/read-body.js';
import { silentLogger, type AgentLogger } from '../log/agent-logger.js';
import { unrefDelay, type Delay } from '../contract/timer-delay.js';
import { createLineLimiter } from '../runtime/line-limiter.js';
import { refusalSummary } from '../runtime/refusal-log.js';
import type { AgentMetrics } from '../runtime/metrics.js';
import type { VoteSink } from '../runtime/votes.js';
import { createLegacyVoteKeys, type AnchorStore } from './legacy-votes.js';
import { judgeDelivery, judgeRequest, receiverRules, REPLIES, type ReceivedDelivery, type Reply } from './receiver-core.js';
import {
  act,
  count,
  createUnrecordedLog,
  currentSecrets,
  refuse,
  type ReceiverState,
} from './receiver-record.js';
import type { SecretSource, WebhookSecrets } from './secrets.js';

export type { ReceivedDelivery } from './receiver-core.js';

/*
 * The node:http shell of the receiver: sockets, the body, the answer. What a delivery is and what
 * to answer is decided in `receiver-core.ts` (pure); what each verdict does (a vote recorded
 * within the deadline, a secret stored) is `receiver-record.ts`.
 */

/** Options of {@link createWebhookReceiver}. */
export interface WebhookReceiverOptions {
  /** Where it listens (`webhooks.listen`). Port 0 picks a free one (see `url()`). */
  listen: ListenAddress;
  /** The one path it answers (`webhooks.path`). Default `/webhooks/listing`. */
  path?: string;
  /**
   * The accepted secrets: a fixed list, or a {@link SecretSource} read on every delivery (and
   * refreshed after a signature that matched none, so a rotation counts at once). A
   * {@link WebhookSecrets} also stores the secrets of integration handshakes.
   */
  secrets: readonly string[] | SecretSource | WebhookSecrets;
  /** The legacy v0 `Authorization` secret (`webhooks.legacyAuthorization`). Default: v0 deliveries refused. */
  legacyAuthorization?: string;
  /**
   * Where votes go: the agent's vote pipeline (`ingest(votes, 'webhook', { traceId })` resolves
   * once they are durable; it logs each new vote, so the receiver logs only duplicates, at debug).
   */
  pipeline: VoteSink;
  /**
   * The agent's project (service ID), read at each delivery: v0 votes, which do not carry it, are
   * filed under it, and a signed vote for another project is refused (400 `other_project`).
   * Default: none (v0 upvotes answered 503; signed votes checked against `projectPlatformId` only).
   */
  projectId?: () => string | undefined;
  /**
   * The project's platform ID (the `id` of a project token's payload, the bot's application
   * Snowflake): a v0 vote for another bot or guild is refused, and so is a signed vote for another
   * project while `projectId` is not known yet. Default: none (not checked).
   */
  projectPlatformId?: string;
  /** Where v0 vote anchors survive a restart (see `legacy-votes.ts`). Default: memory. */
  anchorStore?: AnchorStore;
  /** The URL an `integration.create` answer gives as `webhook_url`. Default: the listening URL. */
  publicUrl?: string;
  /**
   * Also accept an `integration.create` signed only with the secret it carries (the emulator's
   * handshake). Anyone who reaches the receiver could then register a secret and sign votes: keep
   * it off unless only the service can reach the path. Default false: a handshake must be signed
   * with a secret already accepted.
   */
  acceptSelfSignedHandshakes?: boolean;
  /** Seconds `t` may be from the clock, both directions. Default 300. */
  toleranceSeconds?: number;
  /** Bodies above this are refused with 413 unread. Default 65 536 (64 KiB). */
  maxBodyBytes?: number;
  /**
   * Open connections at most, half of them from one address (an IPv6 address with its /64). At
   * the cap, a new connection closes the oldest that has sent nothing yet; with none, it is closed
   * itself. Default 512 (256 from one address: as many as one sender had before the per-address cap).
   */
  maxConnections?: number;
  /**
   * Time to send the first byte, the headers, and the whole request before the connection is cut,
   * and how often the last two are checked. Default 2 000, 5 000, 10 000 and 5 000 ms (a slow
   * client is cut within 5 s past its timeout; checking more often wakes an idle agent more often).
   */
  timeouts?: LocalServerTimeouts;
  /**
   * Past this, a vote not yet recorded is answered 503 (the service retries): inside its 5 s
   * deadline. One timer per delivery, from its verdict on; the record goes on and stands if it
   * lands later. Default 4 000 ms.
   */
  answerWithinMs?: number;
  /** Told of each accepted delivery after its answer went out; its errors are logged. Default: none. */
  onDelivery?: (delivery: ReceivedDelivery) => void;
  logger?: AgentLogger;
  metrics?: Pick<AgentMetrics, 'webhookDeliveries'>;
  /** Epoch ms. Default `Date.now`. */
  now?: () => number;
  /**
   * The timer of the log's summaries (refusals and 503s past the first of each kind: one summary
   * per 10 s). Default: an unref'd `setTimeout`; tests pass a manual one.
   */
  schedule?: Delay;
  /** The setting a `ListenError` names. Default `webhooks.listen` (`LISTING_AGENT_WEBHOOKS_LISTEN`). */
  setting?: ListenSetting;
}

/** The defaults of {@link WebhookReceiverOptions}. */
export const RECEIVER_DEFAULTS = {
  path: '/webhooks/listing',
  maxBodyBytes: 64 * 1024,
  maxConnections: 512,
  answerWithinMs: 4_000,
  setting: { path: 'webhooks.listen', env: 'LISTING_AGENT_WEBHOOKS_LISTEN' },
} as const;

/** The webhook receiver: `start()`, `stop()`, `url()`. */
export interface WebhookReceiver {
  /**
   * Listens; resolves with the receiver's URL (`http://127.0.0.1:9465/webhooks/listing`). Rejects
   * with a `ListenError`. After `stop()` it listens again.
   */
  start(): Promise<string>;
  /** Stops accepting; requests in flight finish until `deadline` (epoch ms), then every connection closes. */
  stop(options?: LocalServerStopOptions): Promise<void>;
  /** The receiver's URL. Throws before `start()` resolved. */
  url(): string;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * The receiver's options that come from the config's `webhooks` section (listen, path, the v0
 * authorization, the public URL): what the agent's capability and `webhooks serve` both pass.
 */
export function receiverSettings(
  webhooks: ListingAgentConfig['webhooks'],
): Pick<WebhookReceiverOptions, 'listen' | 'path' | 'legacyAuthorization' | 'publicUrl'> {
  return {
    listen: webhooks.listen,
    path: webhooks.path,
    ...(webhooks.legacyAuthorization ? { legacyAuthorization: webhooks.legacyAuthorization } : {}),
    ...(webhooks.publicUrl ? { publicUrl: webhooks.publicUrl } : {}),
  };
}

/**
 * `projectPlatformId` from the config's project token, when it is one that names its project: what
 * the agent's capability and `webhooks serve` both pass, so a signed vote for another project is
 * refused before the service has answered.
 */
export function optionalPlatformId(token: string | undefined): Pick<WebhookReceiverOptions, 'projectPlatformId'> {
  const platformId = projectTokenPlatformId(token);
  return platformId === undefined ? {} : { projectPlatformId: platformId };
}

/**
 * The webhook receiver on node:http (no framework): `POST {path}` only (405 with `Allow`
 * otherwise, 404 elsewhere), bodies capped (413 unread above `maxBodyBytes`), slow clients cut off
 * by the header and request timeouts, connections capped. The raw bytes are verified before any
 * JSON is parsed (`verifyDelivery`), then:
 *
 * - `vote.create`: into the pipeline, answered 204 once durably pending (also a duplicate); 503
 *   when it cannot be recorded within `answerWithinMs`, so the service retries;
 * - `webhook.test`: 204; `integration.create`: its secret stored, 200
 *   `{ webhook_url, routes: ['vote.create'] }`; `integration.delete`: its secret forgotten, 204;
 * - v0 (no signature header, an `Authorization` header): `upvote` into the pipeline (key scheme in
 *   `legacy-votes.ts`), `test` 204.
 *
 * Every outcome is counted (`listing_agent_webhook_deliveries_total{outcome}`) and logged, never
 * with a secret or a signature. Nothing a request sends can throw out of the handler.
 */
export function createWebhookReceiver(options: WebhookReceiverOptions): WebhookReceiver {
  const s = receiverState(options);
  const path = s.rules.path;
  const { logger } = s;
  const server = createLocalServer({
    what: 'webhook receiver',
    listen: options.listen,
    setting: options.setting ?? RECEIVER_DEFAULTS.setting,
    logger,
    maxConnections: options.maxConnections ?? RECEIVER_DEFAULTS.maxConnections,
    ...(options.timeouts ? { timeouts: options.timeouts } : {}),
    handler: (req, res) => void handle(s, req, res),
  });

  // Counts the stops: a listen that resolves after a later stop() must not say it listens.
  let stops = 0;
  const receiver: WebhookReceiver = {
    async start() {
      const asked = stops;
      const url = `${await server.start()}${path}`;
      if (asked === stops && s.listeningUrl !== url) {
        s.listeningUrl = url;
        logger.info({ url, legacy: options.legacyAuthorization !== undefined }, 'webhook receiver listening');
      }
      return url;
    },
    async stop(stopOptions) {
      stops += 1;
      // Kept until the requests in flight are answered (an integration's reply names it).
      await server.stop(stopOptions);
      s.listeningUrl = undefined;
      // What the last interval only counted is written now, not lost with the process.
      s.refusals.flush();
      s.unrecorded.flush();
    },
    url() {
      if (s.listeningUrl === undefined) {
        throw new ListingAgentError('not_listening', 'the webhook receiver is not listening: await start() first');
      }
      return s.listeningUrl;
    },
    [Symbol.asyncDispose]: () => receiver.stop(),
  };
  return receiver;
}

/** Refusals and 503s alike: the first of each kind at once, the rest in one summary per 10 s. */
const LOG_INTERVAL_MS = 10_000;

/** The state of a receiver, its defaults applied. */
function receiverState(options: WebhookReceiverOptions): ReceiverState {
  const now = options.now ?? Date.now;
  const logger = options.logger ?? silentLogger;
  const schedule = options.schedule ?? unrefDelay;
  return {
    rules: receiverRules({
      path: options.path ?? RECEIVER_DEFAULTS.path,
      maxBodyBytes: options.maxBodyBytes ?? RECEIVER_DEFAULTS.maxBodyBytes,
      legacyAuthorization: options.legacyAuthorization,
      toleranceSeconds: options.toleranceSeconds,
      acceptSelfSignedHandshakes: options.acceptSelfSignedHandshakes,
      projectId: options.projectId,
      projectPlatformId: options.projectPlatformId,
    }),
    secrets: options.secrets,
    pipeline: options.pipeline,
    logger,
    metrics: options.metrics,
    now,
    answerWithinMs: options.answerWithinMs ?? RECEIVER_DEFAULTS.answerWithinMs,
    publicUrl: options.publicUrl,
    onDelivery: options.onDelivery,
    legacyKeys: createLegacyVoteKeys({ now, ...(options.anchorStore ? { store: options.anchorStore } : {}) }),
    refusals: createLineLimiter({
      now,
      linesPerInterval: 1,
      intervalMs: LOG_INTERVAL_MS,
      schedule,
      summarise: (summary) => refusalSummary(logger, 'webhook deliveries', summary),
    }),
    unrecorded: createUnrecordedLog({ logger, now, intervalMs: LOG_INTERVAL_MS, schedule }),
    listeningUrl: undefined,
  };
}

/** One request: refused before its body (path, method), or read, judged, acted on and answered. Never rejects. */
async function handle(s: ReceiverState, req: IncomingMessage, res: ServerResponse): Promise<void> {
  try {
    const refused = judgeRequest(s.rules, req.method, req.url);
    if (refused !== undefined) {
      send(req, res, refuse(s, req, refused));
      return;
    }
    const body = await readBody(req, s.rules.maxBodyBytes);
    if (body.kind === 'gone') {
      count(s, 'rejected');
      send(req, res, REPLIES.gone);
      return;
    }
    if (body.kind === 'too_large') {
      send(req, res, refuse(s, req, s.rules.tooLarge));
      return;
    }
    const verdict = judgeDelivery(s.rules, body.bytes, req.headers, currentSecrets(s), s.now());
    const answer = await act(s, req, body.bytes, verdict);
    send(req, res, answer.reply);
    if (answer.accepted !== undefined) tell(s, answer.accepted);
  } catch (error) {
    // Nothing here should throw; if it does, the sender gets a 500 and retries, and we stay up.
    s.logger.error({ err: errorMessage(error) }, 'webhook request failed');
    count(s, 'error');
    send(req, res, REPLIES.internalError);
  }
}

/** Tells `onDelivery` of a delivery accepted and answered; what it throws is logged. */
function tell(s: ReceiverState, delivery: ReceivedDelivery): void {
  try {
    s.onDelivery?.(delivery);
  } catch (error) {
    s.logger.warn({ err: errorMessage(error) }, 'onDelivery threw');
  }
}

/** How long a refused connection may still drain before it is destroyed, so the client can read the answer first. */
const LINGER_MS = 250;

/** The headers of every answer. */
const COMMON_HEADERS = { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' } as const;

/** Writes `reply`; a connection that is gone is left alone. Never throws. */
function send(req: IncomingMessage, res: ServerResponse, reply: Reply): void {
  if (res.headersSent || res.destroyed || req.socket.destroyed) return;
  const text = reply.body === undefined || reply.status === 204 ? '' : JSON.stringify(reply.body);
  const close = reply.close === true || !req.complete;
  res.writeHead(reply.status, {
    ...(text ? { 'content-type': 'application/json; charset=utf-8' } : {}),
    // A 204 carries no Content-Length at all (RFC 9110 8.6).
    ...(reply.status === 204 ? {} : { 'content-length': String(Buffer.byteLength(text)) }),
    ...COMMON_HEADERS,
    ...(close ? { connection: 'close' } : {}),
    ...reply.headers,
  });
  if (close) {
    // Node would otherwise read (and discard) the rest of the body, 10 MB of it if that was sent.
    if (!req.complete) req.pause();
    res.once('finish', () => {
      const socket = req.socket;
      socket.end();
      const timer = setTimeout(() => socket.destroy(), LINGER_MS);
      timer.unref();
      socket.once('close', () => clearTimeout(timer));
    });
  }
  res.end(text);
}
