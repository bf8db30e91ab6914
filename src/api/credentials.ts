import { decodeProjectToken } from '../contract/project-token.js';
import { CredentialError } from './errors.js';

/** Something that hands out a current OAuth access token (an `OAuthSession` refreshes its own). */
export interface AccessTokenProvider {
  /** A token valid for at least the next request. */
  getAccessToken(signal?: AbortSignal): Promise<string>;
  /** The project of the authorization, used when a call names none. */
  readonly projectId?: string | undefined;
  /** Secrets to keep out of messages (current tokens). */
  secrets?(): string[];
}

/**
 * The three credentials of the contract:
 * - `project`: the legacy project token; `@me` paths on v1 (Bearer) and v0 (raw).
 * - `oauth`: an OAuth access token (or a provider that refreshes one); explicit project IDs.
 * - `application`: the static application token; every project with a live authorization.
 */
export type Credential =
  | { kind: 'project'; token: string }
  | { kind: 'oauth'; accessToken: string | AccessTokenProvider; projectId?: string }
  | { kind: 'application'; token: string };

/** The kinds of {@link Credential}. */
export type CredentialKind = Credential['kind'];

const NAMES: Record<CredentialKind, string> = {
  project: 'a project token',
  oauth: 'an OAuth access token',
  application: 'an application token',
};

/** Refuses a call locally when the credential is not one the contract allows for it. */
export function requireCredential(credential: Credential, operation: string, allowed: readonly CredentialKind[]): void {
  if (allowed.includes(credential.kind)) return;
  const needed = allowed.map((kind) => NAMES[kind]).join(' or ');
  throw new CredentialError(`${operation} needs ${needed}; this client has ${NAMES[credential.kind]}`);
}

/**
 * The project segment of a v1 path: `@me` for a project token (which works only there), else the
 * explicit ID from the call, the credential or its provider.
 */
export function projectSegment(credential: Credential, operation: string, given: string | undefined): string {
  // An empty ID would build `/projects/`, which is another route (the list) and not an error.
  const projectId = given === '' ? undefined : given;
  if (credential.kind === 'project') {
    if (projectId !== undefined && projectId !== '@me') {
      throw new CredentialError(
        `${operation}: a project token works only on \`@me\` paths; leave projectId out, or use an OAuth access token or an application ` +
          `token for project ${projectId}`,
      );
    }
    return '@me';
  }
  if (projectId === '@me') {
    throw new CredentialError(`${operation}: \`@me\` works only with a project token; pass the project ID`);
  }
  const fallback =
    credential.kind === 'oauth'
      ? credential.projectId ?? (typeof credential.accessToken === 'string' ? undefined : credential.accessToken.projectId)
      : undefined;
  const id = projectId ?? fallback;
  if (id === undefined || id === '') {
    throw new CredentialError(`${operation}: pass projectId (${NAMES[credential.kind]} uses explicit project IDs)`);
  }
  return encodeURIComponent(id);
}

/** The bot ID in a project token (v0's `:bot_id`), or a CredentialError saying why there is none. */
export function botIdFromToken(token: string): string {
  const decoded = decodeProjectToken(token);
  if (!decoded.ok) {
    throw new CredentialError(
      decoded.problem === 'wrong-schema'
        ? "the project token is not in the service's form (three base64url parts with an {id, bot, iat} payload): copy it again from " +
          "the project's Integrations and API settings"
        : 'the project token names an invalid project ID (not a Snowflake)',
    );
  }
  return decoded.payload.id;
}
