import type { IncomingMessage, ServerResponse } from 'node:http';
import { silentLogger } from '../log/agent-logger.js';
import { SIGNATURE_HEADER } from '../contract/limits.js';
import { ListingAgentError } from '../errors.js';
import type { WebhookDeliveriesLabels } from '../runtime/metrics.js';
import { createLocalServer, LOCAL_SERVER_LIMITS } from '../http/local-server.js';
import { readBodyThen, type BodyResult } from '../http/read-body.js';
import type { IngestResult, Vote } from '../runtime/votes.js';
import type { WebhookEvent } from './events.js';
import { createLateWatch } from './late-watch.js';
import { createLegacyVoteKeys } from './legacy-votes.js';
import { createLogThrottle, createTurnBatch, pathOf, send, type Reply } from './receiver-http.js';
import { RECEIVER_DEFAULTS, type ReceivedDelivery, type WebhookReceiver, type WebhookReceiverOptions } from './receiver-types.js';
import type { SecretSource, WebhookSecrets } from './secrets.js';
import { parseLegacyVote, verifyDelivery, verifyLegacyAuthorization, type VerifyDeliveryOptions, type VerifyFailure, type VerifyResult } from './verify.js';
import { voteFromEvent } from './vote-from-event.js';

export { voteFromEvent } from './vote-from-event.js';

export { RECEIVER_DEFAULTS, type ReceivedDelivery, type WebhookReceiver, type WebhookReceiverOptions } from './receiver-types.js';

type Outcome = WebhookDeliveriesLabels['outcome'];

const OUTCOME_OF: Record<VerifyFailure, Outcome> = {
  missing_signature: 'bad_signature',
  malformed_signature: 'bad_signature',
  bad_signature: 'bad_signature',
  stale: 'stale',
  future: 'stale',
  malformed_body: 'malformed',
  unknown_event: 'malformed',
};

type RecordOutcome = 'accepted' | 'duplicate' | 'error';

/** The answers of a record, made once. */
const NO_CONTENT: Reply = Object.freeze({ status: 204 });
const NOT_IN_TIME: Reply = Object.freeze({ status: 503, body: { error: 'not recorded in time, retry' }, headers: { 'retry-after': '1' } });
const NOT_RECORDED: Reply = Object.freeze({ status: 503, body: { error: 'not recorded, retry' }, headers: { 'retry-after': '1' } });

const isSource = (secrets: WebhookReceiverOptions['secrets']): secrets is SecretSource => !Array.isArray(secrets);
const canStore = (secrets: WebhookReceiverOptions['secrets']): secrets is WebhookSecrets => isSource(secrets) && 'addIntegration' in secrets;

const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error));

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
  const path = options.path ?? RECEIVER_DEFAULTS.path;
  const maxBodyBytes = options.maxBodyBytes ?? RECEIVER_DEFAULTS.maxBodyBytes;
  const answerWithinMs = options.answerWithinMs ?? RECEIVER_DEFAULTS.answerWithinMs;
  const now = options.now ?? Date.now;
  const logger = options.logger ?? silentLogger;
  const { secrets, pipeline, metrics } = options;
  const currentSecrets = () => (isSource(secrets) ? secrets.current() : secrets);
  const legacyKeys = createLegacyVoteKeys({ now, ...(options.anchorStore ? { store: options.anchorStore } : {}) });
  const throttle = createLogThrottle(now);
  let listeningUrl: string | undefined;

  /** One labels object per outcome, made once (a counter call per delivery need not allocate). */
  const labelsOf = new Map<Outcome, { outcome: Outcome }>();
  function count(outcome: Outcome): void {
    if (metrics === undefined) return;
    let labels = labelsOf.get(outcome);
    if (labels === undefined) labelsOf.set(outcome, (labels = { outcome }));
    metrics.webhookDeliveries.inc(labels);
  }

  /** Whether a debug line would be written: not built at all otherwise (a line per vote at thousands a second). */
  const levelCheck = (logger as { isLevelEnabled?: unknown }).isLevelEnabled;
  const debugOn = (): boolean => logger !== silentLogger && (typeof levelCheck !== 'function' || (levelCheck as (level: string) => boolean).call(logger, 'debug'));

  /** A refusal: counted, logged at most once per reason per 10 s (a flood must not flood the log). */
  function refuse(req: IncomingMessage, outcome: Outcome, reason: string, reply: Reply): Reply {
    count(outcome);
    const skipped = throttle(reason);
    if (skipped !== undefined) logger.warn({ reason, status: reply.status, remote: req.socket.remoteAddress, ...(skipped > 0 ? { alsoRefusedSince: skipped } : {}) }, 'webhook delivery refused');
    return reply;
  }

  /**
   * Records in flight, each with the moment it is late: a queue and one coarse timer (a timer, or
   * a promise race, per delivery costs more than the delivery's own verification at thousands a second).
   */
  const lateWatch = createLateWatch({
    withinMs: answerWithinMs,
    onError: (error) => logger.error({ err: errorText(error) }, 'answering a late webhook vote failed'),
  });

  /**
   * Records votes within the deadline, then calls `done` once: 204 (accepted or duplicate), or 503
   * when the pipeline cannot (stopped, disk full, too slow). `context` builds the log fields, only
   * when a line is written.
   */
  function recordThen(votes: Vote[], traceId: string | undefined, context: () => Record<string, unknown>, done: (reply: Reply, outcome: RecordOutcome) => void): void {
    const watched = lateWatch.add(() => {
      // Not a lie either way: if the record lands later, the retry is answered as a duplicate.
      logger.warn({ ...context(), withinMs: answerWithinMs }, 'vote not recorded in time; answered 503 so the service retries');
      count('error');
      done(NOT_IN_TIME, 'error');
    });
    const failed = (error: unknown) => {
      if (!lateWatch.settle(watched)) return;
      logger.error({ ...context(), err: errorText(error) }, 'could not record a webhook vote; answered 503 so the service retries');
      count('error');
      done(NOT_RECORDED, 'error');
    };
    let ingesting: Promise<IngestResult>;
    try {
      ingesting = pipeline.ingest(votes, 'webhook', traceId === undefined ? undefined : { traceId });
    } catch (error) {
      failed(error);
      return;
    }
    ingesting.then((result) => {
      let outcome: 'accepted' | 'duplicate';
      try {
        outcome = result.accepted.length > 0 ? 'accepted' : 'duplicate';
      } catch (error) {
        failed(error);
        return;
      }
      if (!lateWatch.settle(watched)) return;
      count(outcome);
      // A new vote is logged by the pipeline (`vote received`, at info); a repeat only here, at debug.
      if (outcome === 'duplicate' && debugOn()) logger.debug({ ...context(), keys: votes.map((v) => v.key), outcome }, 'vote already recorded (a retry or the other road)');
      done(NO_CONTENT, outcome);
    }, failed);
  }

  /** {@link recordThen} as a promise, for the paths that are not the hot one. */
  function record(votes: Vote[], traceId: string | undefined, context: Record<string, unknown>): Promise<{ reply: Reply; outcome: RecordOutcome }> {
    return new Promise((resolve) => recordThen(votes, traceId, () => context, (reply, outcome) => resolve({ reply, outcome })));
  }

  const verifyOptions = (rawBody: Buffer, req: IncomingMessage, list: readonly string[]): VerifyDeliveryOptions =>
    options.toleranceSeconds === undefined ? { rawBody, headers: req.headers, secrets: list, now: now() } : { rawBody, headers: req.headers, secrets: list, now: now(), toleranceSeconds: options.toleranceSeconds };

  function verify(rawBody: Buffer, req: IncomingMessage, list: readonly string[]): VerifyResult {
    return verifyDelivery(verifyOptions(rawBody, req, list));
  }

  /** The emulator signs a handshake with the secret it brings: checked only when allowed. */
  function selfSignedHandshake(rawBody: Buffer, req: IncomingMessage): VerifyResult | undefined {
    let carried: unknown;
    try {
      const body = JSON.parse(rawBody.toString('utf8')) as { type?: unknown; data?: { webhook_secret?: unknown } };
      if (body?.type !== 'integration.create') return undefined;
      carried = body.data?.webhook_secret;
    } catch {
      return undefined;
    }
    if (typeof carried !== 'string' || carried === '') return undefined;
    const result = verify(rawBody, req, [carried]);
    return result.ok && result.event.type === 'integration.create' && result.event.data.webhook_secret === carried ? result : undefined;
  }

  /** Log fields of a v1 event (built only for a line that is written). */
  const traceOf = (event: WebhookEvent, traceId: string | undefined) => (traceId ? { type: event.type, traceId } : { type: event.type });

  /** Every v1 delivery but a verified `vote.create` (see {@link onBody}); `first` is the result of the first verification. */
  async function v1(req: IncomingMessage, rawBody: Buffer, first: VerifyResult, after: (d: ReceivedDelivery) => void): Promise<Reply> {
    let result = first;
    // A rotation may have just landed in the secret file: look once more before refusing.
    if (!result.ok && result.reason === 'bad_signature' && isSource(secrets) && (await secrets.refresh())) result = verify(rawBody, req, currentSecrets());
    if (!result.ok && result.reason === 'bad_signature' && options.acceptSelfSignedHandshakes === true) result = selfSignedHandshake(rawBody, req) ?? result;
    if (!result.ok) {
      const body = result.status === 400 ? { error: result.reason } : undefined;
      return refuse(req, OUTCOME_OF[result.reason], result.reason, { status: result.status, ...(body ? { body } : {}) });
    }
    const { event, traceId } = result;
    const trace = traceOf(event, traceId);
    switch (event.type) {
      case 'vote.create': {
        const { reply, outcome } = await record([voteFromEvent(event.data)], traceId, { ...trace, voteId: event.data.id });
        if (outcome !== 'error') after({ generation: 'v1', event, traceId, outcome });
        return reply;
      }
      case 'webhook.test':
        count('accepted');
        logger.info({ ...trace, project: event.data.project.id }, 'webhook test event received');
        after({ generation: 'v1', event, traceId, outcome: 'accepted' });
        return { status: 204 };
      case 'integration.create': {
        if (!canStore(secrets)) return refuse(req, 'rejected', 'integrations_off', { status: 400, body: { error: 'this receiver does not take integrations' } });
        try {
          await secrets.addIntegration(event.data.connection_id, event.data.webhook_secret);
        } catch (error) {
          logger.error({ ...trace, err: errorText(error) }, 'could not store an integration secret; handshake refused');
          count('error');
          return { status: 503, body: { error: 'could not store the secret' } };
        }
        count('accepted');
        logger.info({ ...trace, connection: event.data.connection_id, project: event.data.project.id }, 'integration connected; its secret is stored');
        after({ generation: 'v1', event, traceId, outcome: 'accepted' });
        return { status: 200, body: { webhook_url: options.publicUrl ?? listeningUrl, routes: ['vote.create'] } };
      }
      case 'integration.delete': {
        if (canStore(secrets)) {
          try {
            await secrets.removeIntegration(event.data.connection_id);
          } catch (error) {
            logger.error({ ...trace, err: errorText(error) }, 'could not forget an integration secret');
            count('error');
            return { status: 503, body: { error: 'could not forget the secret' } };
          }
        }
        count('accepted');
        logger.info({ ...trace, connection: event.data.connection_id }, 'integration disconnected; its secret is forgotten');
        after({ generation: 'v1', event, traceId, outcome: 'accepted' });
        return { status: 204 };
      }
    }
  }

  async function v0(req: IncomingMessage, rawBody: Buffer, legacy: string, after: (d: ReceivedDelivery) => void): Promise<Reply> {
    if (!verifyLegacyAuthorization(req.headers.authorization, [legacy])) return refuse(req, 'bad_signature', 'legacy_authorization', { status: 401 });
    const parsed = parseLegacyVote(rawBody);
    if (!parsed.ok) return refuse(req, 'malformed', `legacy_${parsed.reason}`, { status: 400, body: { error: parsed.reason } });
    const { vote } = parsed;
    if (vote.type === 'test') {
      count('accepted');
      logger.info({ generation: 'v0' }, 'legacy webhook test received');
      after({ generation: 'v0', vote, outcome: 'accepted' });
      return { status: 204 };
    }
    const projectId = options.projectId?.();
    if (projectId === undefined) {
      // v0 bodies do not name the project: its ID comes from the service, which has not answered yet.
      count('error');
      const skipped = throttle('legacy_no_project');
      if (skipped !== undefined) {
        logger.warn(
          { generation: 'v0', status: 503, ...(skipped > 0 ? { alsoAnsweredSince: skipped } : {}) },
          'legacy v0 vote before the service answered (its project ID is not known yet): answered 503 so the service retries it',
        );
      }
      return { status: 503, body: { error: 'not ready, retry' }, headers: { 'retry-after': '5' } };
    }
    let made: Vote;
    try {
      made = await legacyKeys.voteFor(vote, projectId);
    } catch (error) {
      logger.error({ generation: 'v0', err: errorText(error) }, 'could not record a legacy vote anchor; answered 503');
      count('error');
      return { status: 503, body: { error: 'not recorded, retry' } };
    }
    const { reply, outcome } = await record([made], undefined, { generation: 'v0' });
    if (outcome !== 'error') after({ generation: 'v0', vote, outcome });
    return reply;
  }

  /** Answers, then tells `onDelivery` of an accepted delivery. */
  function finish(req: IncomingMessage, res: ServerResponse, reply: Reply, accepted: ReceivedDelivery | undefined): void {
    send(req, res, reply);
    if (accepted !== undefined && options.onDelivery) {
      try {
        options.onDelivery(accepted);
      } catch (error) {
        logger.warn({ err: errorText(error) }, 'onDelivery threw');
      }
    }
  }

  /** Nothing here should throw; if it does, the sender gets a 500 and retries, and we stay up. */
  function failed(req: IncomingMessage, res: ServerResponse, error: unknown): void {
    logger.error({ err: errorText(error) }, 'webhook request failed');
    count('error');
    send(req, res, { status: 500, body: { error: 'internal error' } });
  }

  /** Answers what an async path (`v0`, `v1` other than the hot path) decides. */
  function answerLater(req: IncomingMessage, res: ServerResponse, decide: (after: (d: ReceivedDelivery) => void) => Promise<Reply>): void {
    let accepted: ReceivedDelivery | undefined;
    decide((delivery) => (accepted = delivery)).then(
      (reply) => finish(req, res, reply, accepted),
      (error: unknown) => failed(req, res, error),
    );
  }

  /**
   * Answers recorded votes together, once per turn of the event loop (right after the sockets that
   * were readable are read): answers written back to back cost less than the same answers each
   * written between two reads (see `createTurnBatch`).
   */
  const finishSoon = createTurnBatch<[IncomingMessage, ServerResponse, Reply, ReceivedDelivery | undefined]>(
    ([req, res, reply, accepted]) => finish(req, res, reply, accepted),
    (error) => logger.error({ err: errorText(error) }, 'answering a webhook delivery failed'),
  );

  /**
   * The body is in. The hot path, a v1 `vote.create` that verifies at the first try, runs without
   * a promise of its own until the pipeline's; everything else goes through `v1` / `v0`.
   */
  function onBody(req: IncomingMessage, res: ServerResponse, body: BodyResult): void {
    if (body.kind === 'gone') {
      count('rejected');
      send(req, res, { status: 400 });
      return;
    }
    if (body.kind === 'too_large') {
      send(req, res, refuse(req, 'too_large', 'too_large', { status: 413, body: { error: `the body is larger than ${maxBodyBytes} bytes` }, close: true }));
      return;
    }
    const rawBody = body.bytes;
    const legacy = options.legacyAuthorization;
    if (req.headers[SIGNATURE_HEADER] === undefined && req.headers.authorization !== undefined && legacy !== undefined) {
      answerLater(req, res, (after) => v0(req, rawBody, legacy, after));
      return;
    }
    const result = verify(rawBody, req, currentSecrets());
    if (!result.ok || result.event.type !== 'vote.create') {
      answerLater(req, res, (after) => v1(req, rawBody, result, after));
      return;
    }
    const { event, traceId } = result;
    recordThen([voteFromEvent(event.data)], traceId, () => ({ ...traceOf(event, traceId), voteId: event.data.id }), (reply, outcome) =>
      finishSoon([req, res, reply, outcome === 'error' ? undefined : { generation: 'v1', event, traceId, outcome }]),
    );
  }

  function handle(req: IncomingMessage, res: ServerResponse): void {
    try {
      if (req.url !== path && pathOf(req) !== path) {
        send(req, res, refuse(req, 'rejected', 'not_found', { status: 404, body: { error: `not found: deliveries go to POST ${path}` }, close: true }));
        return;
      }
      if (req.method !== 'POST') {
        send(req, res, refuse(req, 'rejected', 'method', { status: 405, body: { error: 'only POST is allowed' }, headers: { allow: 'POST' }, close: true }));
        return;
      }
      readBodyThen(req, maxBodyBytes, (body) => {
        try {
          onBody(req, res, body);
        } catch (error) {
          failed(req, res, error);
        }
      });
    } catch (error) {
      failed(req, res, error);
    }
  }

  const timeouts = options.timeouts ?? {};
  const server = createLocalServer({
    what: 'webhook receiver',
    listen: options.listen,
    setting: options.setting ?? RECEIVER_DEFAULTS.setting,
    logger,
    maxConnections: options.maxConnections ?? RECEIVER_DEFAULTS.maxConnections,
    limits: {
      headersTimeout: timeouts.headersMs ?? LOCAL_SERVER_LIMITS.headersTimeout,
      requestTimeout: timeouts.requestMs ?? LOCAL_SERVER_LIMITS.requestTimeout,
      connectionsCheckingInterval: timeouts.checkEveryMs ?? LOCAL_SERVER_LIMITS.connectionsCheckingInterval,
    },
    handler: handle,
  });

  const receiver: WebhookReceiver = {
    async start() {
      const base = await server.start();
      listeningUrl = `${base}${path}`;
      logger.info({ url: listeningUrl, legacy: options.legacyAuthorization !== undefined }, 'webhook receiver listening');
      return listeningUrl;
    },
    async stop(stopOptions) {
      await server.stop(stopOptions);
      listeningUrl = undefined;
    },
    url() {
      if (listeningUrl === undefined) throw new ListingAgentError('not_listening', 'the webhook receiver is not listening: await start() first');
      return listeningUrl;
    },
    [Symbol.asyncDispose]: () => receiver.stop(),
  };
  return receiver;
}
