import type { AgentLogger } from '../log/agent-logger.js';
import type { ListenAddress, ListenSetting } from '../http/listen-error.js';
import type { AgentMetrics } from '../runtime/metrics.js';
import type { LocalServerStopOptions, LocalServerTimeouts } from '../http/local-server.js';
import type { VoteSink } from '../runtime/votes.js';
import type { LegacyVote, WebhookEvent } from './events.js';
import type { AnchorStore } from './legacy-votes.js';
import type { SecretSource, WebhookSecrets } from './secrets.js';

/** The options, defaults and shape of the webhook receiver (`receiver.ts` is its behaviour). */

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
  /**
   * Where votes go: the agent's vote pipeline (`ingest(votes, 'webhook', { traceId })` resolves
   * once they are durable; it logs each new vote, so the receiver logs only duplicates, at debug).
   */
  pipeline: VoteSink;
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
  /** Past this, a vote not yet recorded is answered 503 (the service retries): inside its 5 s deadline. Default 4 000 ms. */
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
  schedule?: (callback: () => void, delayMs: number) => () => void;
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
