import { CONTRACT_LIMITS, PLATFORM_TYPES, SCOPES, type Platform, type Scope } from '../contract/limits.js';
import { isS256Challenge, PKCE_METHOD } from '../contract/pkce.js';
import { renderConsentPage } from './consent-page.js';
import type { EmulatorContext } from './context.js';
import type { Reply, RequestContext } from './http.js';
import { fail } from './http.js';
import { randomToken } from './ids.js';
import type { AuthorizeRequest } from './oauth-core.js';
import type { ProjectRecord } from './state.js';
import { canManageProject } from './state.js';

/**
 * `GET /oauth2/authorize`: checks the request (RFC 6749 4.1.2.1 and decisions.md: a bad client or
 * redirect URI is a 400 page, everything else redirects with `error` and `state`), then either
 * shows the consent page or, with `login_as` and `decision`, answers at once for scripts.
 */


/** Parameters whose repetition makes the request invalid (RFC 6749 3.1: at most once each). */
const SINGLE_PARAMETERS = [
  'response_type', 'scope', 'state', 'code_challenge', 'code_challenge_method',
  'project_id', 'platform', 'platform_id', 'login_as', 'decision',
] as const;

/** A 302 to `redirectUri` with `params` appended to its query; the registered URI stays byte-exact. */
function redirectReply(redirectUri: string, params: Record<string, string>): Reply {
  const query = new URLSearchParams(params).toString();
  const separator = !redirectUri.includes('?') ? '?' : /[?&]$/.test(redirectUri) ? '' : '&';
  return { status: 302, headers: { location: `${redirectUri}${separator}${query}`, 'cache-control': 'no-store' } };
}

/** The one value of a page-level parameter; a missing or repeated one is a 400 page (never a redirect). */
function pageParameter(query: URLSearchParams, name: string): string {
  const values = query.getAll(name);
  if (values.length === 0 || values[0] === '') fail(400, `${name} is missing`);
  if (values.length > 1) fail(400, `${name} is given more than once`);
  return values[0]!;
}

function findPreselected(emu: EmulatorContext, query: URLSearchParams): ProjectRecord | undefined {
  const { projects } = emu.state;
  const projectId = query.get('project_id');
  const byId = projectId ? projects.get(projectId) : undefined;
  if (byId) return byId;
  const platformId = query.get('platform_id');
  if (!platformId) return undefined;
  const platform = query.get('platform');
  // Without `platform` any platform matches; an unknown platform name matches nothing.
  if (platform && !(platform in PLATFORM_TYPES)) return undefined;
  for (const project of projects.values()) {
    if (project.platform_id === platformId && (!platform || project.platform === (platform as Platform))) return project;
  }
  return undefined;
}

/** Checks an authorization request: the request, or the error redirect (or a thrown 400 page). */
function checkAuthorizeRequest(ctx: RequestContext): { ok: true; request: AuthorizeRequest } | { ok: false; reply: Reply } {
  const query = ctx.url.searchParams;
  const clientId = pageParameter(query, 'client_id');
  const application = ctx.emu.state.applications.get(clientId);
  if (!application) fail(400, 'unknown client_id: no application is registered with it');
  const redirectUri = pageParameter(query, 'redirect_uri');
  if (!application.redirect_uris.includes(redirectUri)) {
    fail(400, 'redirect_uri is not one of the URIs registered for this application (the match is exact)');
  }

  const stateValues = query.getAll('state');
  const state = stateValues.length === 1 && stateValues[0] !== '' ? stateValues[0]! : undefined;
  const deny = (error: string, description: string) => ({
    ok: false as const,
    reply: redirectReply(redirectUri, { error, error_description: description, ...(state !== undefined ? { state } : {}) }),
  });

  const repeated = SINGLE_PARAMETERS.find((name) => query.getAll(name).length > 1);
  if (repeated) return deny('invalid_request', `${repeated} is given more than once`);
  const responseType = query.get('response_type');
  if (!responseType) return deny('invalid_request', 'response_type is missing (it must be `code`)');
  if (responseType !== 'code') return deny('unsupported_response_type', 'response_type must be `code`');
  if (state === undefined) return deny('invalid_request', 'state is missing: send an opaque per-request value');

  const scopeText = query.get('scope') ?? '';
  const requested = [...new Set(scopeText.split(' ').filter((s) => s !== ''))];
  if (requested.length === 0) return deny('invalid_request', 'scope is missing: send the requested scopes separated by spaces');
  const unknown = requested.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (unknown.length > 0) return deny('invalid_scope', `unknown scope: ${unknown.join(' ')}`);

  const method = query.get('code_challenge_method');
  if (!method) return deny('invalid_request', 'code_challenge_method is missing: PKCE with S256 is required');
  if (method !== PKCE_METHOD) return deny('invalid_request', 'code_challenge_method must be S256 (plain is not supported)');
  const codeChallenge = query.get('code_challenge');
  if (!codeChallenge) return deny('invalid_request', 'code_challenge is missing: PKCE is required');
  if (!isS256Challenge(codeChallenge)) {
    return deny('invalid_request', 'code_challenge must be base64url(sha256(verifier)) without padding: 43 characters');
  }
  return {
    ok: true,
    request: {
      application,
      redirectUri,
      state,
      scopes: requested as Scope[],
      codeChallenge,
      preselected: findPreselected(ctx.emu, query),
      query,
    },
  };
}

/** The projects a user owns or administers, in listing order. */
function manageableProjects(emu: EmulatorContext, userId: string): ProjectRecord[] {
  return [...emu.state.projects.values()].filter((project) => canManageProject(project, userId));
}

/** Issues a single-use code for an approved request (lifetime CONTRACT_LIMITS.authorizationCodeSeconds). */
function issueCode(emu: EmulatorContext, request: AuthorizeRequest, userId: string, projectId: string): string {
  const now = emu.clock.now();
  // Unused expired codes can never succeed again; used ones stay so a replay is still detected.
  for (const [key, record] of emu.state.codes) {
    if (!record.used && record.expires_at <= now) emu.state.codes.delete(key);
  }
  const code = randomToken('lac_');
  emu.state.codes.set(code, {
    code,
    client_id: request.application.client_id,
    redirect_uri: request.redirectUri,
    code_challenge: request.codeChallenge,
    user_id: userId,
    project_id: projectId,
    scopes: [...request.scopes],
    expires_at: now + CONTRACT_LIMITS.authorizationCodeSeconds * 1000,
    used: false,
    authorization_id: null,
  });
  return code;
}

/** Handles `GET /oauth2/authorize`. */
export function handleAuthorize(ctx: RequestContext): Reply {
  const checked = checkAuthorizeRequest(ctx);
  if (!checked.ok) return checked.reply;
  const { request } = checked;
  const { query } = request;
  const deny = (error: string, description: string) =>
    redirectReply(request.redirectUri, { error, error_description: description, state: request.state });

  const decision = query.get('decision') || undefined;
  const loginAs = query.get('login_as') || undefined;
  if (decision === 'cancel') return deny('access_denied', 'the user cancelled the authorization');
  if (decision !== undefined && decision !== 'approve') return deny('invalid_request', 'decision must be approve or cancel');
  if (decision === undefined || loginAs === undefined) {
    return renderConsentPage(ctx.emu, request, {
      loginAs,
      ...(decision ? { notice: 'Pick the user to sign in as, then approve.' } : {}),
    });
  }

  const user = ctx.emu.state.users.get(loginAs);
  if (!user) return deny('access_denied', 'the user could not sign in (unknown user)');
  let project = request.preselected;
  if (!project) {
    const manageable = manageableProjects(ctx.emu, user.id);
    if (manageable.length === 0) return deny('access_denied', 'the user owns or administers no project to grant');
    if (manageable.length > 1) {
      return deny('invalid_request', 'the user manages several projects: project_id is needed to pick one');
    }
    project = manageable[0]!;
  }
  if (!canManageProject(project, user.id)) {
    return deny('access_denied', 'only an owner or admin of the project can grant it');
  }
  const code = issueCode(ctx.emu, request, user.id, project.id);
  return redirectReply(request.redirectUri, { code, state: request.state });
}
