import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ListingAgentConfig } from '../config/schema.js';
import { silentLogger } from '../log/agent-logger.js';
import { ListingAgentError } from '../errors.js';
import { createLocalServer } from '../http/local-server.js';
import { readBodyThen, type BodyResult } from '../http/read-body.js';
import { createLateWatch } from './late-watch.js';
import { createLegacyVoteKeys } from './legacy-votes.js';
import { act } from './receiver-act.js';
import { judgeDelivery, judgeRequest, receiverRules, REPLIES, type Verdict } from './receiver-core.js';
import { createTurnBatch, send } from './receiver-http.js';
import { answerLate, newRecording, recordThen } from './receiver-record.js';
import { count, currentSecrets, debugCheck, errorText, failed, finish, finishRecording, refusalSummary, refuse, type ReceiverState, type Recording } from './receiver-state.js';
import { createUnrecordedLog } from './receiver-unrecorded.js';
import { createLineLimiter, unrefDelay } from '../runtime/line-limiter.js';
import { RECEIVER_DEFAULTS, type WebhookReceiver, type WebhookReceiverOptions } from './receiver-types.js';


export { RECEIVER_DEFAULTS, type ReceivedDelivery, type WebhookReceiver, type WebhookReceiverOptions } from './receiver-types.js';

/*
 * The node:http shell of the receiver: sockets, the body, the answer. What a delivery is and what
 * to answer is decided in `receiver-core.ts` (pure); recording a vote within the deadline is
 * `receiver-record.ts`, every other verdict `receiver-act.ts`.
 */

/**
 * The receiver's options that come from the config's `webhooks` section (listen, path, the v0
 * authorization, the public URL): what the agent's capability and `webhooks serve` both pass.
 */
export function receiverSettings(webhooks: ListingAgentConfig['webhooks']): Pick<WebhookReceiverOptions, 'listen' | 'path' | 'legacyAuthorization' | 'publicUrl'> {
  return {
    listen: webhooks.listen,
    path: webhooks.path,
    ...(webhooks.legacyAuthorization ? { legacyAuthorization: webhooks.legacyAuthorization } : {}),
    ...(webhooks.publicUrl ? { publicUrl: webhooks.publicUrl } : {}),
  };
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
    handler: (req, res) => handle(s, req, res),
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
      if (s.listeningUrl === undefined) throw new ListingAgentError('not_listening', 'the webhook receiver is not listening: await start() first');
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
  const answerWithinMs = options.answerWithinMs ?? RECEIVER_DEFAULTS.answerWithinMs;
  const schedule = options.schedule ?? unrefDelay;
  const s: ReceiverState = {
    rules: receiverRules({
      path: options.path ?? RECEIVER_DEFAULTS.path,
      maxBodyBytes: options.maxBodyBytes ?? RECEIVER_DEFAULTS.maxBodyBytes,
      legacyAuthorization: options.legacyAuthorization,
      toleranceSeconds: options.toleranceSeconds,
      acceptSelfSignedHandshakes: options.acceptSelfSignedHandshakes,
      projectId: options.projectId,
    }),
    secrets: options.secrets,
    pipeline: options.pipeline,
    logger,
    metrics: options.metrics,
    now,
    answerWithinMs,
    publicUrl: options.publicUrl,
    onDelivery: options.onDelivery,
    legacyKeys: createLegacyVoteKeys({ now, ...(options.anchorStore ? { store: options.anchorStore } : {}) }),
    refusals: createLineLimiter({ now, linesPerInterval: 1, intervalMs: LOG_INTERVAL_MS, schedule, summarise: (summary) => refusalSummary(logger, summary) }),
    unrecorded: createUnrecordedLog({ logger, now, intervalMs: LOG_INTERVAL_MS, schedule }),
    labelsOf: new Map(),
    // A queue and one coarse timer: a timer, or a promise race, per delivery costs more than its verification.
    lateWatch: createLateWatch<Recording>({
      withinMs: answerWithinMs,
      onLate: (recording) => answerLate(s, recording),
      onError: (error) => logger.error({ err: errorText(error) }, 'answering a late webhook vote failed'),
    }),
    // Answers written back to back cost less than the same answers each written between two reads.
    finishSoon: createTurnBatch<Recording>(
      (recording) => finishRecording(s, recording),
      (error) => logger.error({ err: errorText(error) }, 'answering a webhook delivery failed'),
    ),
    debugOn: debugCheck(logger),
    listeningUrl: undefined,
  };
  return s;
}

function handle(s: ReceiverState, req: IncomingMessage, res: ServerResponse): void {
  try {
    const refused = judgeRequest(s.rules, req.method, req.url);
    if (refused !== undefined) {
      send(req, res, refuse(s, req, refused));
      return;
    }
    readBodyThen(req, s.rules.maxBodyBytes, (body) => {
      try {
        onBody(s, req, res, body);
      } catch (error) {
        failed(s, req, res, error);
      }
    });
  } catch (error) {
    failed(s, req, res, error);
  }
}

/**
 * The body is in. The hot path, a v1 `vote.create` that verifies at the first try, runs without
 * a promise of its own until the pipeline's, and is answered with the others of its turn; every
 * other verdict goes through `act`.
 */
function onBody(s: ReceiverState, req: IncomingMessage, res: ServerResponse, body: BodyResult): void {
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
  if (verdict.kind === 'vote') recordThen(s, newRecording(verdict, [verdict.vote], req, res, s.finishSoon));
  else answerLater(s, req, res, body.bytes, verdict);
}

/** Answers what the slow paths decide. */
function answerLater(s: ReceiverState, req: IncomingMessage, res: ServerResponse, rawBody: Buffer, verdict: Verdict): void {
  act(s, req, rawBody, verdict).then(
    (answer) => finish(s, req, res, answer.reply, answer.accepted),
    (error: unknown) => failed(s, req, res, error),
  );
}
