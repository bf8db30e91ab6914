import type { Capability, CapabilityContext, ServiceProject } from '../runtime/capability.js';
import type { Readiness } from '../runtime/readiness.js';
import { listenSetting } from '../config/setting-names.js';
import { stateDirectory } from '../config/state-directory.js';
import type { RedisConnection } from '../redis/connection.js';
import type { VoteSink } from '../runtime/votes.js';
import {
  createWebhookReceiver,
  optionalPlatformId,
  receiverSettings,
  type WebhookReceiver,
  type WebhookReceiverOptions,
} from './receiver.js';
import { createWebhookSecrets, secretFilePath, type WebhookSecrets } from './secrets.js';

/** The readiness component and log binding of the receiver. */
const WEBHOOKS_COMPONENT = 'webhooks';

/** Options of {@link createWebhooksCapability}; everything else comes from the agent's context and `config.webhooks`. */
export interface WebhooksCapabilityOptions {
  /**
   * The running vote pipeline (the votes capability's, started before this one), read at start:
   * the receiver feeds it, so one vote on both roads fires the hooks once. Required: the agent
   * wires it (with `votes.enabled` off, a votes capability that runs the pipeline without polling).
   */
  sharedPipeline: () => VoteSink | undefined;
  /** The secret file. Default `<state.directory>/webhook-secrets.json`; `false`: none (integration secrets in memory). */
  secretFile?: string | false;
  /**
   * Redis shared by several agents (`state.redis`): rotated and integration secrets are read from
   * and stored there (`webhooks:secrets`), so every agent accepts them; the file's are still
   * accepted. Default: none.
   */
  secretsRedis?: RedisConnection;
  /** Receiver tuning and test seams (timeouts, limits, self-signed handshakes). Default: the receiver's. */
  receiver?: Partial<
    Pick<
      WebhookReceiverOptions,
      'timeouts' | 'maxConnections' | 'maxBodyBytes' | 'answerWithinMs' | 'acceptSelfSignedHandshakes' | 'toleranceSeconds' | 'onDelivery'
    >
  >;
}

/** The `webhooks` capability. */
export interface WebhooksCapability extends Capability {
  /** The receiver's URL while it listens, else undefined. */
  readonly url: string | undefined;
}

/**
 * Receives signed (and legacy) vote deliveries on `webhooks.listen` + `webhooks.path` and feeds
 * them to the vote pipeline it is given (the votes capability's, which runs before it). It starts
 * with the agent, before the service answered: a signed v1 delivery is verified with the secret
 * alone. Only v0 deliveries, which do not name the project, wait for the service's answer (503
 * until then, so the service retries them; readiness `webhooks` says so). Secrets:
 * `webhooks.secrets` plus the secret file, re-read when it changes, plus with `secretsRedis` the
 * secrets shared in Redis. Readiness `webhooks` says where
 * it listens. On stop the port stops taking connections, and requests in flight finish (until the
 * deadline); the pipeline is its owner's to stop.
 */
export function createWebhooksCapability(options: WebhooksCapabilityOptions): WebhooksCapability {
  const h: WebhooksState = {
    options,
    receiver: undefined,
    secrets: undefined,
    url: undefined,
    now: Date.now,
    project: undefined,
    serviceProblem: 'not reached yet',
    started: undefined,
  };
  return {
    name: WEBHOOKS_COMPONENT,
    startsBeforeService: true,
    get url() {
      return h.url;
    },
    start: (context) => start(h, context),
    serviceWaiting(reason) {
      h.serviceProblem = reason;
      markListening(h);
    },
    async serviceReached(reached) {
      h.project = reached;
      markListening(h);
    },
    async stop(deadline) {
      h.started = undefined;
      try {
        // The port first: no new delivery is taken, the ones in flight get their answer.
        await h.receiver?.stop({ deadline, now: h.now });
      } finally {
        h.receiver = undefined;
        h.url = undefined;
        h.secrets?.close();
        h.secrets = undefined;
      }
    },
  };
}

/** The state of one webhooks capability. */
interface WebhooksState {
  readonly options: WebhooksCapabilityOptions;
  receiver: WebhookReceiver | undefined;
  secrets: WebhookSecrets | undefined;
  url: string | undefined;
  now: () => number;
  /** The project the service answered as: v0 votes are filed under it. */
  project: ServiceProject | undefined;
  serviceProblem: string;
  /** Where readiness goes while started, and whether v0 deliveries are taken. */
  started: { readiness: Readiness; legacy: boolean } | undefined;
}

/** `webhooks`: where it listens, and whether v0 votes wait for the service. */
function markListening(h: WebhooksState): void {
  if (h.started === undefined || h.url === undefined) return;
  const waitsForService = h.started.legacy && h.project === undefined;
  const waiting = waitsForService ? `; v0 votes wait for the service (${h.serviceProblem}): answered 503 until then` : '';
  h.started.readiness.set(WEBHOOKS_COMPONENT, true, `listening at ${h.url}${waiting}`);
}

async function start(h: WebhooksState, context: CapabilityContext): Promise<void> {
  const { config } = context;
  const { options } = h;
  h.now = context.now;
  const pipeline = options.sharedPipeline();
  if (pipeline === undefined) {
    throw new Error('the webhook receiver was given the votes pipeline, but it is not running: start the votes capability first');
  }
  const file = options.secretFile === false ? undefined : (options.secretFile ?? secretFilePath(stateDirectory(config)));
  const secrets = (h.secrets = createWebhookSecrets({
    configured: config.webhooks.secrets,
    ...(file ? { file } : {}),
    ...(options.secretsRedis ? { redis: options.secretsRedis } : {}),
    now: context.now,
    logger: context.logger,
  }));
  await secrets.start();
  h.project = context.project;
  h.serviceProblem = 'not reached yet';
  const receiver = (h.receiver = createWebhookReceiver({
    ...options.receiver,
    ...receiverSettings(config.webhooks),
    secrets,
    pipeline,
    projectId: () => h.project?.id,
    // Before the service answered, a signed vote's project is checked against the token's.
    ...optionalPlatformId(config.service.token),
    anchorStore: context.store,
    logger: context.logger,
    metrics: context.metrics,
    now: context.now,
    setting: listenSetting('webhooks.listen', context.mode),
  }));
  try {
    h.url = await receiver.start();
  } catch (error) {
    secrets.close();
    throw error;
  }
  h.started = { readiness: context.readiness, legacy: config.webhooks.legacyAuthorization !== undefined };
  markListening(h);
  if (config.webhooks.legacyAuthorization !== undefined && config.votes.enabled) {
    // v0 deliveries carry no created_at, so their keys cannot match the cursor's.
    const message =
      'legacy v0 votes and the votes cursor both run: a vote that comes by both is rewarded twice; use one of them per project';
    context.logger.warn({}, message);
  }
}
