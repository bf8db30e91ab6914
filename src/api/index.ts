/** The listing-service client: every v1 and v0 operation, OAuth 2.1, one error family. */

export { createListingClient, DEFAULT_BASE_URLS } from './client.js';
export type { ListingClient, ListingClientOptions } from './client.js';
export type { AccessTokenProvider, Credential, CredentialKind } from './credentials.js';
export type { CallOptions } from './context.js';
export {
  ApiError,
  BadRequestError,
  UnauthorizedError,
  ForbiddenError,
  NotFoundError,
  ConflictError,
  UnprocessableEntityError,
  RateLimitError,
  ServerError,
  UnexpectedStatusError,
  NetworkError,
  TimeoutError,
  CredentialError,
  createApiError,
} from './errors.js';
export type { ApiErrorInit, ApiFamily, ProblemDetails } from './errors.js';
export { createTransport, DEFAULT_USER_AGENT } from './transport.js';
export type { Transport, TransportClock, TransportOptions, TransportRequest, TransportResponse, RetryEvent } from './transport.js';
export { DEFAULT_RETRY_POLICY, backoffDelay, parseRetryAfter, decideRetry } from './retry.js';
export type { RetryPolicy, AttemptOutcome, RetryDecision } from './retry.js';

// Answers of the service, as the client types them.
export type { ProjectListItem, ProjectListPage, Project, Announcement } from './schemas/projects.js';
export type { InvalidVoteRecord, VoteRecord, VotesPage, VoteStatus } from './schemas/votes.js';
export type { VoteFieldProblem, VoteRefusalReason } from '../contract/vote-fields.js';
export type { Webhook, CreatedWebhook, RotatedWebhookSecret, Integration } from './schemas/webhooks.js';
export type { User, UserConnection, UserProject } from './schemas/users.js';
export type { Bot, BotField, BotsPage, BotStats, V0UserProfile } from './schemas/v0.js';

// Inputs of the client's methods.
export type { ProjectUpdate, ProjectsApi } from './v1/projects.js';
export type { ApplicationCommand, ApplicationCommandOption, ApplicationCommandShape, CommandsApi } from './v1/commands.js';
export type { AnnouncementCreate, AnnouncementsApi } from './v1/announcements.js';
export type { MetricsKind, MetricsPayload, MetricsBatchInput, MetricsCallOptions, MetricsApi } from './v1/metrics.js';
export type { VotesFrom, VoteStatusQuery, VotesApi } from './v1/votes.js';
export type { CreateWebhookInput, WebhooksApi } from './v1/webhooks.js';
export type { IntegrationsApi } from './v1/integrations.js';
export type { CreateProjectInput, UsersApi } from './v1/users.js';
export type { BotsQuery, V0StatsPost, V0Api } from './v0/index.js';

export * from './oauth/index.js';
