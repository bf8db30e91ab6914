/**
 * `listing-agent/webhooks`: signed webhook deliveries without the agent. `verifyDelivery` is a pure
 * function (bytes, headers, secret, clock); the handlers adapt it to Express, Fastify and
 * `node:http` (`nodeWebhookHandler`); `createWebhookReceiver` is the agent's own receiver, with its durable vote path.
 *
 * ```ts
 * import { expressWebhookHandler } from 'listing-agent/webhooks';
 * app.post('/votes', express.raw({ type: 'application/json' }),
 *   expressWebhookHandler({ secrets: () => [secret], onEvent: async (event) => reward(event) }));
 * ```
 *
 * @packageDocumentation
 */
export { signDelivery, computeSignature } from '../contract/signature.js';
export type { SignDeliveryOptions } from '../contract/signature.js';
export {
  verifyDelivery,
  verifyLegacyAuthorization,
  parseLegacyVote,
  parseSignatureHeader,
  DEFAULT_SIGNATURE_TOLERANCE_SECONDS,
} from '../webhooks/verify.js';
export type {
  VerifyDeliveryOptions,
  VerifyResult,
  VerifiedDelivery,
  RejectedDelivery,
  VerifyFailure,
  WebhookHeaders,
} from '../webhooks/verify.js';
export type { WebhookEvent, WebhookEventType, VoteCreateData, LegacyVote } from '../webhooks/events.js';
export type { VoteFieldProblem, VoteRefusalReason } from '../contract/vote-fields.js';
export { expressWebhookHandler, fastifyWebhookHandler, nodeWebhookHandler, handleWebhookDelivery } from '../webhooks/adapters.js';
export type { WebhookHandlerOptions } from '../webhooks/adapters.js';
export { createWebhookReceiver } from '../webhooks/receiver.js';
export { createWebhookSecrets, recordRotatedSecret } from '../webhooks/secrets.js';

// The types that the signatures above name, so that a bot can name them too.
export type {
  DeliveryContext,
  ExpressLikeRequest,
  FastifyLikeReply,
  FastifyLikeRequest,
  WebhookAnswer,
  WebhookProblem,
} from '../webhooks/adapters.js';
export type { WebhooksCapabilityOptions } from '../webhooks/capability.js';
export type {
  IntegrationCreateData,
  IntegrationDeleteData,
  LegacyBotVote,
  LegacyGuildVote,
  WebhookProject,
  WebhookTestData,
  WebhookUser,
} from '../webhooks/events.js';
export type { AnchorStore } from '../webhooks/legacy-votes.js';
export type { ReceivedDelivery } from '../webhooks/receiver-core.js';
export type { WebhookReceiver, WebhookReceiverOptions } from '../webhooks/receiver.js';
export type { fileSchema, SecretFileContent } from '../webhooks/secrets-file.js';
export type { SecretSource, WebhookSecrets, WebhookSecretsOptions } from '../webhooks/secrets.js';
export type { LegacyVoteFailure, ParsedSignatureHeader } from '../webhooks/verify.js';
