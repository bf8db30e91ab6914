import type { Scope } from '../contract/limits.js';
import { decodeProjectToken, projectTokenSignatureValid } from '../contract/project-token.js';
import type { RequestContext } from './http.js';
import { fail } from './http.js';
import type {
  AccessTokenRecord,
  ApplicationRecord,
  AuthorizationRecord,
  EmulatorState,
  ProjectRecord,
  UserRecord,
} from './state.js';
import { canManageProject, findProjectByPlatformId } from './state.js';

/** What a v1 bearer token turned out to be. */
export type V1Token =
  | { kind: 'project'; project: ProjectRecord }
  | { kind: 'oauth'; access: AccessTokenRecord; authorization: AuthorizationRecord }
  | { kind: 'application'; application: ApplicationRecord };

/** A request's access to one project. */
export interface ProjectAccess {
  project: ProjectRecord;
  token: V1Token;
  /** The user whose authorization granted the scope in use (null for a project token). */
  actingUserId: string | null;
}

/** How error details name each credential kind. */
const CREDENTIAL_NAMES: Record<V1Token['kind'], string> = {
  project: 'a project token',
  oauth: 'an OAuth access token',
  application: 'an application token',
};

/** Options of {@link authorizeProject}. */
export interface AuthorizeProjectOptions {
  /** The credential kinds the route takes; others get 403 naming these. Default: all three. */
  accept?: readonly V1Token['kind'][];
}

function refuseKind(kind: V1Token['kind'], accept: readonly V1Token['kind'][]): never {
  const needed = accept.map((k) => CREDENTIAL_NAMES[k]).join(' or ');
  return fail(403, `${CREDENTIAL_NAMES[kind].replace(/^an? /, '')}s cannot call this route: it needs ${needed}`);
}

const PROJECT_TOKEN_HINT = 'a project token works only on `@me` paths (for example /projects/@me/votes)';

function bearerToken(ctx: RequestContext): string {
  const header = ctx.req.headers.authorization;
  if (header === undefined || header.trim() === '') {
    fail(401, 'missing Authorization header: send `Authorization: Bearer <token>`');
  }
  const match = /^Bearer +(\S+)\s*$/i.exec(header);
  if (!match) {
    fail(401, 'v1 needs the `Bearer ` prefix: send `Authorization: Bearer <token>` (raw tokens work only on v0)');
  }
  const token = match[1]!;
  const limit = ctx.emu.rateLimiter.hit(`v1:${token}`, ctx.emu.settings.v1RequestsPerSecond, 1000);
  if (!limit.ok) {
    fail(429, `more than ${ctx.emu.settings.v1RequestsPerSecond} requests per second with this credential`, {
      headers: { 'retry-after': String(limit.retryAfterSeconds) },
    });
  }
  return token;
}

/** The project a correctly signed project token names, or why the token is not usable. */
function resolveProjectToken(
  ctx: RequestContext,
  token: string,
): { ok: true; project: ProjectRecord | undefined } | { ok: false; status: 400 | 401; detail: string } {
  const decoded = decodeProjectToken(token);
  if (!decoded.ok) {
    return decoded.problem === 'wrong-schema'
      ? {
          ok: false,
          status: 400,
          detail: 'the token has the wrong schema: a project token is three base64url parts with an {id, bot, iat} payload',
        }
      : { ok: false, status: 400, detail: "the token's project ID is invalid: `id` must be a Snowflake (17 to 20 digits)" };
  }
  if (!projectTokenSignatureValid(ctx.emu.signingKey, decoded)) {
    return { ok: false, status: 401, detail: 'invalid token: the service did not issue it (bad signature)' };
  }
  return { ok: true, project: findProjectByPlatformId(ctx.emu.state, decoded.payload.id) };
}

function findApplicationByToken(state: EmulatorState, token: string): ApplicationRecord | undefined {
  for (const application of state.applications.values()) {
    if (application.application_token === token) return application;
  }
  return undefined;
}

/** Identifies an OAuth access token or application token; undefined for anything else. */
function identifyOAuthOrApplication(ctx: RequestContext, token: string): V1Token | undefined {
  const { state, clock } = ctx.emu;
  const access = state.accessTokens.get(token);
  if (access) {
    const authorization = state.authorizations.get(access.authorization_id);
    if (access.revoked || !authorization || authorization.revoked) fail(401, 'the access token was revoked');
    if (clock.now() >= access.expires_at) fail(401, 'the access token expired: refresh it with the refresh token');
    ctx.credential = 'oauth';
    return { kind: 'oauth', access, authorization };
  }
  const application = findApplicationByToken(state, token);
  if (application) {
    ctx.credential = 'application';
    return { kind: 'application', application };
  }
  return undefined;
}

/** Live authorizations through which an application reaches a project (the user can still manage it). */
export function liveAuthorizations(state: EmulatorState, clientId: string, project: ProjectRecord): AuthorizationRecord[] {
  return [...state.authorizations.values()].filter(
    (a) =>
      a.client_id === clientId &&
      a.project_id === project.id &&
      !a.revoked &&
      state.users.has(a.user_id) &&
      canManageProject(project, a.user_id),
  );
}

/**
 * Authenticates a v1 project-scoped request (`/projects/:project_id/...`) and checks `scope`.
 * `@me` takes a project token; explicit IDs take an OAuth access token or an application token.
 */
export function authorizeProject(
  ctx: RequestContext,
  projectIdParam: string,
  scope: Scope,
  options: AuthorizeProjectOptions = {},
): ProjectAccess {
  const accept = options.accept ?? (['project', 'oauth', 'application'] as const);
  const token = bearerToken(ctx);
  const { state } = ctx.emu;
  const identified = identifyOAuthOrApplication(ctx, token);
  if (identified && !accept.includes(identified.kind)) refuseKind(identified.kind, accept);
  if (identified && projectIdParam === '@me') {
    fail(400, '`@me` works only with a project token; with an OAuth access or application token use the explicit project ID');
  }
  if (identified?.kind === 'oauth') {
    const project = state.projects.get(projectIdParam);
    if (!project || identified.authorization.project_id !== projectIdParam) {
      fail(404, 'project not part of the authorization, or it no longer exists');
    }
    if (!identified.authorization.scopes.includes(scope)) fail(403, `the scope ${scope} was not granted`);
    return { project, token: identified, actingUserId: identified.authorization.user_id };
  }
  if (identified?.kind === 'application') {
    const project = state.projects.get(projectIdParam);
    const live = project ? liveAuthorizations(state, identified.application.client_id, project) : [];
    if (!project || live.length === 0) {
      fail(404, 'no live authorization for this project: a user who manages it must authorize the application');
    }
    const granting = live.find((a) => a.scopes.includes(scope));
    if (!granting) fail(403, `the scope ${scope} was not granted by any live authorization`);
    return { project, token: identified, actingUserId: granting.user_id };
  }
  const resolved = resolveProjectToken(ctx, token);
  if (resolved.ok && !accept.includes('project')) refuseKind('project', accept);
  if (projectIdParam !== '@me') {
    if (resolved.ok) fail(403, PROJECT_TOKEN_HINT);
    fail(401, 'invalid token');
  }
  if (!resolved.ok) fail(resolved.status, resolved.detail);
  ctx.credential = 'project';
  if (!resolved.project) fail(404, 'the project of this token no longer exists');
  return { project: resolved.project, token: { kind: 'project', project: resolved.project }, actingUserId: null };
}

/** Authenticates `GET /projects`: an OAuth access token or an application token. */
export function authenticateProjectList(ctx: RequestContext): Exclude<V1Token, { kind: 'project' }> {
  const token = bearerToken(ctx);
  const identified = identifyOAuthOrApplication(ctx, token);
  if (identified && identified.kind !== 'project') return identified;
  const resolved = resolveProjectToken(ctx, token);
  if (resolved.ok) fail(403, 'project tokens cannot list projects: use an OAuth access token or an application token');
  return fail(401, 'invalid token');
}

/** Authenticates a user endpoint (`/users/@me...`): only an OAuth access token with `scope`. */
export function authorizeUser(ctx: RequestContext, scope: Scope): { user: UserRecord; authorization: AuthorizationRecord } {
  const token = bearerToken(ctx);
  const identified = identifyOAuthOrApplication(ctx, token);
  if (identified?.kind === 'application') {
    fail(403, 'user endpoints need an OAuth access token; application tokens cannot call them');
  }
  if (identified?.kind === 'oauth') {
    if (!identified.authorization.scopes.includes(scope)) fail(403, `the scope ${scope} was not granted`);
    const user = ctx.emu.state.users.get(identified.authorization.user_id);
    if (!user) fail(404, 'the user no longer exists');
    return { user, authorization: identified.authorization };
  }
  const resolved = resolveProjectToken(ctx, token);
  if (resolved.ok) fail(403, 'project tokens cannot call user endpoints: use an OAuth access token');
  return fail(401, 'invalid token');
}

/** Enforces the per-project limit of the metrics and commands routes (60/min by default). */
export function limitProjectWrites(ctx: RequestContext, project: ProjectRecord): void {
  const limit = ctx.emu.rateLimiter.hit(`writes:${project.id}`, ctx.emu.settings.v1ProjectWritesPerMinute, 60_000);
  if (!limit.ok) {
    fail(429, `more than ${ctx.emu.settings.v1ProjectWritesPerMinute} metrics and commands requests per minute for this project`, {
      headers: { 'retry-after': String(limit.retryAfterSeconds) },
    });
  }
}

/**
 * Authenticates a v0 request: the raw project token in `Authorization` (no `Bearer `). Bot routes
 * also count against the 60/min limit per token, answered with 429, `Retry-After` and
 * `{"retry-after": s}`.
 */
export function authenticateV0(ctx: RequestContext, options: { botRoute: boolean }): ProjectRecord {
  const header = ctx.req.headers.authorization?.trim();
  if (!header) fail(401, 'Unauthorized: send the project token in the Authorization header');
  if (/^Bearer\s/i.test(header)) {
    fail(401, 'Unauthorized: v0 takes the raw token without the `Bearer ` prefix');
  }
  const resolved = resolveProjectToken(ctx, header);
  if (!resolved.ok || !resolved.project) fail(401, 'Unauthorized: unknown token');
  ctx.credential = 'project';
  if (options.botRoute) {
    const limit = ctx.emu.rateLimiter.hit(`v0:${header}`, ctx.emu.settings.v0BotRequestsPerMinute, 60_000);
    if (!limit.ok) {
      fail(429, 'Too many requests', {
        headers: { 'retry-after': String(limit.retryAfterSeconds) },
        body: { 'retry-after': limit.retryAfterSeconds },
      });
    }
  }
  return resolved.project;
}
