import type { AccessTokenProvider, Credential } from './credentials.js';
import { createApiContext, type ApiContext } from './context.js';
import { CredentialError } from './errors.js';
import { createTransport, systemClock, type TransportOptions } from './transport.js';

/*
 * What every client of the service is built on, whichever way its groups of calls are made: the
 * credential, the transport and the context they share. client.ts makes every group at once;
 * the agent makes each at its first use (agent/service-client.ts).
 */

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

/** A client's credential kind, its shared context, and what closes its transport. */
export interface ClientContext {
  credentialKind: Credential['kind'];
  ctx: ApiContext;
  close: () => Promise<void>;
}

/** The credential, transport and context of a client made with `options`. */
export function createClientContext(options: ListingClientOptions): ClientContext {
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
  return { credentialKind: credential.kind, ctx, close: () => transport.close() };
}
