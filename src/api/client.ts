import { createClientContext, type ListingClientOptions } from './client-context.js';
import { createV0Api } from './v0/index.js';
import { createAnnouncementsApi } from './v1/announcements.js';
import { createCommandsApi } from './v1/commands.js';
import { createIntegrationsApi } from './v1/integrations.js';
import { createMetricsApi } from './v1/metrics.js';
import { createProjectsApi } from './v1/projects.js';
import { createUsersApi } from './v1/users.js';
import { createVotesApi } from './v1/votes.js';
import { createWebhooksApi } from './v1/webhooks.js';

export { DEFAULT_BASE_URLS, type ListingClientOptions } from './client-context.js';

/**
 * A typed client for every operation of the listing service (v1 and v0), with timeouts, retries
 * (429, 502/503/504, network errors; only idempotent calls after they may have been received),
 * client-side limits and one error family.
 */
export function createListingClient(options: ListingClientOptions) {
  const { credentialKind, ctx, close } = createClientContext(options);
  return {
    /** The credential kind this client uses. */
    credentialKind,
    projects: createProjectsApi(ctx),
    commands: createCommandsApi(ctx),
    announcements: createAnnouncementsApi(ctx),
    metrics: createMetricsApi(ctx),
    votes: createVotesApi(ctx),
    webhooks: createWebhooksApi(ctx),
    integrations: createIntegrationsApi(ctx),
    users: createUsersApi(ctx),
    v0: createV0Api(ctx),
    /** Closes the connection pool the client made (not a dispatcher passed in). */
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** A client made by {@link createListingClient}. */
export type ListingClient = ReturnType<typeof createListingClient>;
