import { CONTRACT_LIMITS } from '../../contract/limits.js';
import { codeVerifierProblem, verifierMatchesChallenge } from '../../contract/pkce.js';
import type { EmulatorContext } from '../context.js';
import type { Reply, RequestContext } from '../http.js';
import { empty, fail, json, readForm } from '../http.js';
import { randomToken } from '../ids.js';
import { projectListItem } from '../model.js';
import { handleAuthorize } from '../oauth-authorize.js';
import { authenticateClient } from '../oauth-client.js';
import { grantAuthorization, issueAccessToken, revokeAuthorization } from '../oauth-core.js';
import type { Route } from '../router.js';
import type { ApplicationRecord, AuthorizationRecord } from '../state.js';
import { canManageProject } from '../state.js';

/** Token responses carry credentials: no cache may keep them (RFC 6749 5.1). */
const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' };

function invalidGrant(detail: string): never {
  return fail(400, detail, { oauthError: 'invalid_grant' });
}

/** The form of a token or revoke request; a repeated parameter is `invalid_request` (RFC 6749 3.2). */
function oauthForm(ctx: RequestContext): URLSearchParams {
  const form = readForm(ctx);
  const seen = new Set<string>();
  for (const name of form.keys()) {
    if (seen.has(name)) fail(400, `${name} is given more than once`, { oauthError: 'invalid_request' });
    seen.add(name);
  }
  return form;
}

function required(form: URLSearchParams, name: string): string {
  const value = form.get(name);
  if (!value) fail(400, `${name} is missing`, { oauthError: 'invalid_request' });
  return value;
}

/** The live authorization whose current refresh token is `token`, if any. */
function findByRefreshToken(emu: EmulatorContext, token: string): AuthorizationRecord | undefined {
  for (const authorization of emu.state.authorizations.values()) {
    if (!authorization.revoked && authorization.refresh_token === token) return authorization;
  }
  return undefined;
}

function tokenBody(authorization: AuthorizationRecord, accessToken: string) {
  return {
    access_token: accessToken,
    token_type: 'Bearer',
    expires_in: CONTRACT_LIMITS.accessTokenSeconds,
    refresh_token: authorization.refresh_token,
    scope: authorization.scopes.join(' '),
  };
}

/** `grant_type=authorization_code`: a single-use code, bound to client, redirect URI and PKCE challenge. */
function exchangeCode(ctx: RequestContext, form: URLSearchParams, application: ApplicationRecord): Reply {
  const { emu } = ctx;
  const code = required(form, 'code');
  const redirectUri = required(form, 'redirect_uri');
  const verifier = required(form, 'code_verifier');
  const record = emu.state.codes.get(code);
  // Another client's code is reported like an unknown one and left usable for its owner.
  if (!record || record.client_id !== application.client_id) invalidGrant('the code is unknown or was not issued to this client');
  if (record.used) {
    // OAuth 2.1 4.1.3: a replayed code means it leaked, so what it produced is revoked too.
    const produced = record.authorization_id ? emu.state.authorizations.get(record.authorization_id) : undefined;
    if (produced && !produced.revoked) revokeAuthorization(emu, produced);
    invalidGrant('the code was already used; the tokens issued for it are now revoked');
  }
  if (emu.clock.now() >= record.expires_at) {
    invalidGrant(`the code expired: codes live ${CONTRACT_LIMITS.authorizationCodeSeconds} seconds`);
  }
  if (record.redirect_uri !== redirectUri) invalidGrant('redirect_uri differs from the one of the authorization request');
  if (codeVerifierProblem(verifier) === 'length') {
    invalidGrant(`code_verifier must be ${CONTRACT_LIMITS.codeVerifierMinLength} to ${CONTRACT_LIMITS.codeVerifierMaxLength} characters`);
  }
  if (!verifierMatchesChallenge(verifier, record.code_challenge)) {
    invalidGrant('code_verifier does not match the code_challenge (S256)');
  }
  const project = emu.state.projects.get(record.project_id);
  if (!project || !emu.state.users.has(record.user_id) || !canManageProject(project, record.user_id)) {
    invalidGrant('the project no longer exists or the user can no longer grant it');
  }
  record.used = true;
  const issued = grantAuthorization(emu, {
    client_id: application.client_id,
    user_id: record.user_id,
    project_id: project.id,
    scopes: record.scopes,
    accessTokenSeconds: CONTRACT_LIMITS.accessTokenSeconds,
  });
  record.authorization_id = issued.authorization.id;
  return json(200, { ...tokenBody(issued.authorization, issued.access_token), project: projectListItem(project) }, NO_STORE);
}

/** `grant_type=refresh_token`: rotates the refresh token and issues a new access token. */
function refresh(ctx: RequestContext, form: URLSearchParams, application: ApplicationRecord): Reply {
  const authorization = findByRefreshToken(ctx.emu, required(form, 'refresh_token'));
  if (!authorization || authorization.client_id !== application.client_id) {
    invalidGrant('the refresh token is unknown, was already used (they rotate on every refresh), revoked, or not issued to this client');
  }
  authorization.refresh_token = randomToken('lrt_');
  const accessToken = issueAccessToken(ctx.emu, authorization, CONTRACT_LIMITS.accessTokenSeconds);
  return json(200, tokenBody(authorization, accessToken), NO_STORE);
}

/** `POST /oauth2/token`. */
function token(ctx: RequestContext): Reply {
  const form = oauthForm(ctx);
  const application = authenticateClient(ctx, form);
  const grantType = required(form, 'grant_type');
  if (grantType === 'authorization_code') return exchangeCode(ctx, form, application);
  if (grantType === 'refresh_token') return refresh(ctx, form, application);
  return fail(400, 'grant_type must be authorization_code or refresh_token', { oauthError: 'unsupported_grant_type' });
}

/**
 * `POST /oauth2/revoke` (RFC 7009): a refresh token ends its authorization and every access token
 * of it; an access token ends itself. Unknown tokens and tokens of other clients change nothing
 * and still get 200, so the answer tells nobody whether a token exists.
 */
function revoke(ctx: RequestContext): Reply {
  const form = oauthForm(ctx);
  const application = authenticateClient(ctx, form);
  const value = required(form, 'token');
  const { emu } = ctx;
  const authorization = findByRefreshToken(emu, value);
  if (authorization && authorization.client_id === application.client_id) {
    revokeAuthorization(emu, authorization);
  } else {
    const access = emu.state.accessTokens.get(value);
    const owner = access ? emu.state.authorizations.get(access.authorization_id) : undefined;
    if (access && owner?.client_id === application.client_id) access.revoked = true;
  }
  return empty(200, NO_STORE);
}

/** `POST /api/v1/oauth2/token` and `POST /api/v1/oauth2/revoke` (paths relative to `/api/v1`). */
export const oauthRoutes: Route[] = [
  { method: 'POST', pattern: '/oauth2/token', handler: token },
  { method: 'POST', pattern: '/oauth2/revoke', handler: revoke },
];

/** `GET /oauth2/authorize` (the consent page, and `login_as`/`decision` for scripts). */
export const authorizeRoutes: Route[] = [{ method: 'GET', pattern: '/oauth2/authorize', handler: handleAuthorize }];
