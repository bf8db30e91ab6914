import type { IncomingMessage, ServerResponse } from 'node:http';
import { silentLogger, type AgentLogger } from '../agent/logger.js';
import { SIGNATURE_HEADER } from '../contract/limits.js';
import { ListingAgentError } from '../errors.js';
import type { ListenAddress, ListenSetting } from '../health/listen-error.js';
import type { AgentMetrics, WebhookDeliveriesLabels } from '../health/metrics.js';
import { createLocalServer, LOCAL_SERVER_LIMITS, type LocalServerStopOptions } from '../http/local-server.js';
import type { IngestResult } from '../votes/pipeline-types.js';
import { voteKey, type Vote } from '../votes/types.js';
import type { LegacyVote, VoteCreateData, WebhookEvent } from './events.js';
import { createLegacyVoteKeys, type AnchorStore } from './legacy-votes.js';
import { createLogThrottle, pathOf, readBody, send, type Reply } from './receiver-http.js';
import type { SecretSource, WebhookSecrets } from './secrets.js';
import { parseLegacyVote, verifyDelivery, verifyLegacyAuthorization, type VerifyFailure, type VerifyResult } from './verify.js';

/** A delivery the receiver accepted, as {@link WebhookReceiverOptions.onDelivery} hears it (after the answer). */
export type ReceivedDelivery =
  | { generation: 'v1'; event: WebhookEvent; traceId: string | undefined; outcome: 'accepted' | 'duplicate' }
  | { generation: 'v0'; vote: LegacyVote; outcome: 'accepted' | 'duplicate' };

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
  /** Where votes go: the agent's vote pipeline (`ingest(votes, 'webhook')` resolves once they are durable). */
  pipeline: { ingest(votes: readonly Vote[], road: Vote['road']): Promise<IngestResult> };
  /** The agent's project (service ID), for v0 votes, which do not carry it. Default: none (v0 upvotes answered 503). */
  projectId?: () => string | undefined;
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
  /** Open connections at most; more are closed at once. Default 256. */
  maxConnections?: number;
  /** Time to send the headers, and the whole request, before the connection is cut. Default 5 000 and 10 000 ms. */
  timeouts?: { headersMs?: number; requestMs?: number; checkEveryMs?: number };
  /** Past this, a vote not yet recorded is answered 503 (the service retries): inside its 5 s deadline. Default 4 000 ms. */
  answerWithinMs?: number;
  /** Told of each accepted delivery after its answer went out; its errors are logged. Default: none. */
  onDelivery?: (delivery: ReceivedDelivery) => void;
  logger?: AgentLogger;
  metrics?: Pick<AgentMetrics, 'webhookDeliveries'>;
  /** Epoch ms. Default `Date.now`. */
  now?: () => number;
  /** The setting a `ListenError` names. Default `webhooks.listen` (`LISTING_AGENT_WEBHOOKS_LISTEN`). */
  setting?: ListenSetting;
}

/** The defaults of {@link WebhookReceiverOptions}. */
export const RECEIVER_DEFAULTS = {
  path: '/webhooks/listing',
  maxBodyBytes: 64 * 1024,
  maxConnections: 256,
  answerWithinMs: 4_000,
  setting: { path: 'webhooks.listen', env: 'LISTING_AGENT_WEBHOOKS_LISTEN' },
} as const;

/** The webhook receiver: `start()`, `stop()`, `url()`. */
export interface WebhookReceiver {
  /** Listens; resolves with the receiver's URL (`http://127.0.0.1:9465/webhooks/listing`). Rejects with a `ListenError`. */
  start(): Promise<string>;
  /** Stops accepting; requests in flight finish until `deadline` (epoch ms), then every connection closes. */
  stop(options?: LocalServerStopOptions): Promise<void>;
  /** The receiver's URL. Throws before `start()` resolved. */
  url(): string;
  [Symbol.asyncDispose](): Promise<void>;
}

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

const isSource = (secrets: WebhookReceiverOptions['secrets']): secrets is SecretSource => !Array.isArray(secrets);
const canStore = (secrets: WebhookReceiverOptions['secrets']): secrets is WebhookSecrets => isSource(secrets) && 'addIntegration' in secrets;

/** The vote of a `vote.create`: keyed like the poller's, so one vote on both roads fires once. */
export function voteFromEvent(data: VoteCreateData): Vote {
  return {
    key: voteKey(data.user.id, data.created_at),
    userId: data.user.id,
    platformId: data.user.platform_id,
    projectId: data.project.id,
    weight: data.weight,
    createdAt: new Date(Date.parse(data.created_at)).toISOString(),
    expiresAt: new Date(Date.parse(data.expires_at)).toISOString(),
    road: 'webhook',
    voteId: data.id,
    user: { name: data.user.name, avatarUrl: data.user.avatar_url },
  };
}

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

  function count(outcome: Outcome): void {
    metrics?.webhookDeliveries.inc({ outcome });
  }

  /** A refusal: counted, logged at most once per reason per 10 s (a flood must not flood the log). */
  function refuse(req: IncomingMessage, outcome: Outcome, reason: string, reply: Reply): Reply {
    count(outcome);
    const skipped = throttle(reason);
    if (skipped !== undefined) logger.warn({ reason, status: reply.status, remote: req.socket.remoteAddress, ...(skipped > 0 ? { alsoRefusedSince: skipped } : {}) }, 'webhook delivery refused');
    return reply;
  }

  /**
   * Records in flight, each with the moment it is late. One coarse timer checks them all: a
   * timer per delivery costs more than the delivery's own verification at thousands a second.
   */
  const inFlight = new Map<symbol, { lateAt: number; late: () => void }>();
  let lateTimer: NodeJS.Timeout | undefined;
  function watchLate(): void {
    if (lateTimer !== undefined) return;
    lateTimer = setInterval(() => {
      const time = Date.now();
      for (const [id, entry] of inFlight) {
        if (entry.lateAt <= time) {
          inFlight.delete(id);
          entry.late();
        }
      }
      if (inFlight.size === 0) {
        clearInterval(lateTimer);
        lateTimer = undefined;
      }
    }, Math.max(10, Math.min(250, Math.floor(answerWithinMs / 4))));
    lateTimer.unref();
  }

  /** Records votes within the deadline: 204, or 503 when the pipeline cannot (stopped, disk full, too slow). */
  async function record(votes: Vote[], trace: Record<string, unknown>): Promise<{ reply: Reply; outcome: 'accepted' | 'duplicate' | 'error' }> {
    const id = Symbol('record');
    const late = new Promise<'late'>((resolve) => {
      inFlight.set(id, { lateAt: Date.now() + answerWithinMs, late: () => resolve('late') });
    });
    watchLate();
    try {
      const result = await Promise.race([pipeline.ingest(votes, 'webhook'), late]);
      if (result === 'late') {
        // Not a lie either way: if the record lands later, the retry is answered as a duplicate.
        logger.warn({ ...trace, withinMs: answerWithinMs }, 'vote not recorded in time; answered 503 so the service retries');
        count('error');
        return { reply: { status: 503, body: { error: 'not recorded in time, retry' }, headers: { 'retry-after': '1' } }, outcome: 'error' };
      }
      const outcome = result.accepted.length > 0 ? 'accepted' : 'duplicate';
      count(outcome);
      logger.debug({ ...trace, keys: votes.map((v) => v.key), outcome }, outcome === 'accepted' ? 'vote received by webhook' : 'vote already recorded (a retry or the other road)');
      return { reply: { status: 204 }, outcome };
    } catch (error) {
      logger.error({ ...trace, err: errorText(error) }, 'could not record a webhook vote; answered 503 so the service retries');
      count('error');
      return { reply: { status: 503, body: { error: 'not recorded, retry' }, headers: { 'retry-after': '1' } }, outcome: 'error' };
    } finally {
      inFlight.delete(id);
    }
  }

  function verify(rawBody: Buffer, req: IncomingMessage, list: readonly string[]): VerifyResult {
    return verifyDelivery({ rawBody, headers: req.headers, secrets: list, now: now(), ...(options.toleranceSeconds === undefined ? {} : { toleranceSeconds: options.toleranceSeconds }) });
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

  async function v1(req: IncomingMessage, rawBody: Buffer, after: (d: ReceivedDelivery) => void): Promise<Reply> {
    let result = verify(rawBody, req, currentSecrets());
    // A rotation may have just landed in the secret file: look once more before refusing.
    if (!result.ok && result.reason === 'bad_signature' && isSource(secrets) && (await secrets.refresh())) result = verify(rawBody, req, currentSecrets());
    if (!result.ok && result.reason === 'bad_signature' && options.acceptSelfSignedHandshakes === true) result = selfSignedHandshake(rawBody, req) ?? result;
    if (!result.ok) {
      const body = result.status === 400 ? { error: result.reason } : undefined;
      return refuse(req, OUTCOME_OF[result.reason], result.reason, { status: result.status, ...(body ? { body } : {}) });
    }
    const { event, traceId } = result;
    const trace = { type: event.type, ...(traceId ? { traceId } : {}) };
    switch (event.type) {
      case 'vote.create': {
        const { reply, outcome } = await record([voteFromEvent(event.data)], { ...trace, voteId: event.data.id });
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
      count('error');
      logger.warn({ generation: 'v0' }, 'legacy vote before the project is known; answered 503 so it is retried');
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
    const { reply, outcome } = await record([made], { generation: 'v0' });
    if (outcome !== 'error') after({ generation: 'v0', vote, outcome });
    return reply;
  }

  async function route(req: IncomingMessage, after: (d: ReceivedDelivery) => void): Promise<Reply> {
    if (pathOf(req) !== path) return refuse(req, 'rejected', 'not_found', { status: 404, body: { error: `not found: deliveries go to POST ${path}` }, close: true });
    if (req.method !== 'POST') {
      return refuse(req, 'rejected', 'method', { status: 405, body: { error: 'only POST is allowed' }, headers: { allow: 'POST' }, close: true });
    }
    const body = await readBody(req, maxBodyBytes);
    if (body.kind === 'gone') {
      count('rejected');
      return { status: 400 };
    }
    if (body.kind === 'too_large') return refuse(req, 'too_large', 'too_large', { status: 413, body: { error: `the body is larger than ${maxBodyBytes} bytes` }, close: true });
    const legacy = options.legacyAuthorization;
    if (req.headers[SIGNATURE_HEADER] === undefined && req.headers.authorization !== undefined && legacy !== undefined) return v0(req, body.bytes, legacy, after);
    return v1(req, body.bytes, after);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let accepted: ReceivedDelivery | undefined;
    let reply: Reply;
    try {
      reply = await route(req, (delivery) => (accepted = delivery));
    } catch (error) {
      // Nothing above should throw; if it does, the sender gets a 500 and retries, and we stay up.
      logger.error({ err: errorText(error) }, 'webhook request failed');
      count('error');
      reply = { status: 500, body: { error: 'internal error' } };
    }
    send(req, res, reply);
    if (accepted !== undefined && options.onDelivery) {
      try {
        options.onDelivery(accepted);
      } catch (error) {
        logger.warn({ err: errorText(error) }, 'onDelivery threw');
      }
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
    handler: (req, res) => void handle(req, res),
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
