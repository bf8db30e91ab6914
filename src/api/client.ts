import type { AccessTokenProvider, Credential } from './credentials.js';
import { createApiContext } from './context.js';
import { CredentialError } from './errors.js';
import { createTransport, systemClock, type TransportOptions } from './transport.js';
import { createV0Api } from './v0/index.js';
import { createAnnouncementsApi } from './v1/announcements.js';
import { createCommandsApi } from './v1/commands.js';
import { createIntegrationsApi } from './v1/integrations.js';
import { createMetricsApi } from './v1/metrics.js';
import { createProjectsApi } from './v1/projects.js';
import { createUsersApi } from './v1/users.js';
import { createVotesApi } from './v1/votes.js';
import { createWebhooksApi } from './v1/webhooks.js';

/** The real service's base URLs (the defaults of {@link ListingClientOptions}). */
export const DEFAULT_BASE_URLS = {
  v1: 'https://top.gg/api/v1',
  v0: 'https://top.gg/api',
  auth: 'https://top.gg',
} as const;

/** Options of {@link createListingClient}: one credential, the bases, and the transport's options. */
export interface ListingClientOptions extends TransportOptions {
  /** The credential; or give exactly one of the shortcuts below. */
  credential?: Credential;
  /** Shortcut: a project token (`@me` paths; also used for v0). */
  projectToken?: string;
  /** Shortcut: an OAuth access token, or a provider (an `OAuthSession`) that refreshes it. */
  accessToken?: string | AccessTokenProvider;
  /** Shortcut: an application token. */
  applicationToken?: string;
  /** With an OAuth access token: the project used when a call names none. */
  projectId?: string;
  /** v1 base URL. Default `https://top.gg/api/v1`. */
  v1BaseUrl?: string;
  /** v0 base URL. Default `https://top.gg/api`. */
  v0BaseUrl?: string;
  /** The raw token for v0 calls. Default: the project token. */
  v0Token?: string;
  /** Check every answer against the contract's schemas. Default true. */
  validateResponses?: boolean;
}

function pickCredential(options: ListingClientOptions): Credential {
  const given = [
    options.credential,
    options.projectToken,
    options.accessToken,
    options.applicationToken,
  ].filter((value) => value !== undefined && value !== '');
  if (given.length !== 1) {
    throw new CredentialError(
      given.length === 0
        ? 'createListingClient needs a credential: projectToken, accessToken, applicationToken or credential'
        : 'createListingClient takes exactly one of credential, projectToken, accessToken, applicationToken',
    );
  }
  if (options.credential) return options.credential;
  if (options.projectToken) return { kind: 'project', token: options.projectToken };
  if (options.applicationToken) return { kind: 'application', token: options.applicationToken };
  return {
    kind: 'oauth',
    accessToken: options.accessToken!,
    ...(options.projectId !== undefined ? { projectId: options.projectId } : {}),
  };
}

/**
 * A typed client for every operation of the listing service (v1 and v0), with timeouts, retries
 * (429, 502/503/504, network errors; only idempotent calls after they may have been received),
 * client-side limits and one error family.
 */
export function createListingClient(options: ListingClientOptions) {
  const credential = pickCredential(options);
  const transport = createTransport(options);
  const ctx = createApiContext({
    credential,
    v1BaseUrl: options.v1BaseUrl ?? DEFAULT_BASE_URLS.v1,
    v0BaseUrl: options.v0BaseUrl ?? DEFAULT_BASE_URLS.v0,
    v0Token: options.v0Token,
    transport,
    clock: options.clock ?? systemClock,
    validateResponses: options.validateResponses ?? true,
  });
  const close = () => transport.close();
  return {
    /** The credential kind this client uses. */
    credentialKind: credential.kind,
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
