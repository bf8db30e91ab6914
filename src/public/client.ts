/**
 * `listing-agent/client`: the listing service's client (every v1 and v0 operation, OAuth 2.1, one
 * error family) and the contract's constants. Use it without the agent:
 *
 * ```ts
 * import { createListingClient } from 'listing-agent/client';
 * const client = createListingClient({ projectToken: process.env.LISTING_AGENT_SERVICE_TOKEN! });
 * ```
 *
 * @packageDocumentation
 */
export * from '../api/index.js';
export {
  CONTRACT_LIMITS,
  DECISION_DEFAULTS,
  SUPPORTED_LOCALES,
  ANNOUNCEMENT_CATEGORIES,
  SCOPES,
  PLATFORM_TYPES,
  SERVICE_SOURCE,
  VOTE_SOURCES,
  VOTE_FIELD_LIMITS,
  SIGNATURE_HEADER,
  TRACE_HEADER,
} from '../contract/limits.js';
export type { SupportedLocale, AnnouncementCategory, Scope, Platform, ProjectType, VoteSource } from '../contract/limits.js';
export { decodeProjectToken } from '../contract/project-token.js';
export type { ProjectTokenPayload, DecodedProjectToken, ProjectTokenProblem } from '../contract/project-token.js';

// The types that the signatures above name, so that a bot can name them too.
export type { ApiCall, ApiContext } from '../api/context.js';
export type { CooldownTracker } from '../api/limits.js';
export type { announcementSchema, projectListItemSchema, projectListPageSchema, projectSchema } from '../api/schemas/projects.js';
export type { userConnectionSchema, userProjectSchema, userSchema } from '../api/schemas/users.js';
export type { botSchema, botStatsSchema, v0UserProfileSchema } from '../api/schemas/v0.js';
export type { voteRecordShape, voteStatusSchema } from '../api/schemas/votes.js';
export type { createdWebhookSchema, integrationSchema, rotatedWebhookSecretSchema, webhookSchema } from '../api/schemas/webhooks.js';
export type { createV0Api } from '../api/v0/index.js';
export type { createAnnouncementsApi } from '../api/v1/announcements.js';
export type { ApplicationCommandOptionShape, CommandLocalizations, createCommandsApi } from '../api/v1/commands.js';
export type { createIntegrationsApi } from '../api/v1/integrations.js';
export type { createMetricsApi } from '../api/v1/metrics.js';
export type { createProjectsApi } from '../api/v1/projects.js';
export type { createUsersApi } from '../api/v1/users.js';
export type { createVotesApi } from '../api/v1/votes.js';
export type { createWebhooksApi } from '../api/v1/webhooks.js';
export type { METRICS_FIELDS, MetricsField } from '../contract/metrics.js';
export type { PKCE_METHOD } from '../contract/pkce.js';
export type { LocalizedText, ProjectEdit } from '../contract/project-edit.js';
