import type { Scope } from '../contract/limits.js';
import type { EmulatorContext } from './context.js';
import { randomToken } from './ids.js';
import type { ApplicationRecord, AuthorizationRecord, ProjectRecord } from './state.js';

/** An authorization request that passed every check. */
export interface AuthorizeRequest {
  application: ApplicationRecord;
  redirectUri: string;
  state: string;
  scopes: Scope[];
  codeChallenge: string;
  /** The project named by `project_id`, else by `platform` + `platform_id`; unknown IDs are ignored. */
  preselected: ProjectRecord | undefined;
  /** The query as received, for the consent form's hidden fields. */
  query: URLSearchParams;
}

/** Tokens handed out for an authorization. */
export interface IssuedTokens {
  access_token: string;
  refresh_token: string;
  expires_in: number;
  authorization: AuthorizationRecord;
}

/** Revokes an authorization and every access token issued for it. */
export function revokeAuthorization(emu: EmulatorContext, authorization: AuthorizationRecord): void {
  authorization.revoked = true;
  for (const access of emu.state.accessTokens.values()) {
    if (access.authorization_id === authorization.id) access.revoked = true;
  }
}

/** A new access token for a live authorization (seven days by the contract). */
export function issueAccessToken(emu: EmulatorContext, authorization: AuthorizationRecord, lifetimeSeconds: number): string {
  const token = randomToken('lat_');
  emu.state.accessTokens.set(token, {
    token,
    authorization_id: authorization.id,
    expires_at: emu.clock.now() + lifetimeSeconds * 1000,
    revoked: false,
  });
  return token;
}

/**
 * Creates a live authorization of `client_id` by `user_id` for `project_id`, replacing (revoking)
 * a previous one of the same application, user and project, and issues its first tokens.
 */
export function grantAuthorization(
  emu: EmulatorContext,
  input: { client_id: string; user_id: string; project_id: string; scopes: Scope[]; accessTokenSeconds: number },
): IssuedTokens {
  for (const previous of emu.state.authorizations.values()) {
    if (
      !previous.revoked &&
      previous.client_id === input.client_id &&
      previous.user_id === input.user_id &&
      previous.project_id === input.project_id
    ) {
      revokeAuthorization(emu, previous);
    }
  }
  const authorization: AuthorizationRecord = {
    id: emu.nextId(),
    client_id: input.client_id,
    user_id: input.user_id,
    project_id: input.project_id,
    scopes: [...new Set(input.scopes)],
    refresh_token: randomToken('lrt_'),
    revoked: false,
    created_at: emu.clock.now(),
  };
  emu.state.authorizations.set(authorization.id, authorization);
  return {
    access_token: issueAccessToken(emu, authorization, input.accessTokenSeconds),
    refresh_token: authorization.refresh_token,
    expires_in: input.accessTokenSeconds,
    authorization,
  };
}
