import type { Scope } from '../../contract/limits.js';
import { authorizeProject } from '../auth.js';
import type { RequestContext } from '../http.js';
import { HttpError, fail } from '../http.js';
import type { ProjectRecord, UserRecord } from '../state.js';

/** A request's access to a project through an application (OAuth access token or application token). */
export interface DelegatedAccess {
  project: ProjectRecord;
  /** The application acting: webhooks and connections belong to it. */
  clientId: string;
  /** The user whose authorization granted the scope in use. */
  actingUser: UserRecord;
}

/** Options of {@link authorizeDelegated}. */
export interface DelegatedAccessOptions {
  /** Accept an application token besides an OAuth access token. Default false (webhooks). */
  allowApplicationToken?: boolean;
}

/**
 * Authenticates `/projects/:project_id/...` for the webhook and integration routes, which belong to
 * an application: project tokens are refused with 403 (and application tokens too unless allowed),
 * with a detail saying which credential is needed.
 */
export function authorizeDelegated(ctx: RequestContext, scope: Scope, options: DelegatedAccessOptions = {}): DelegatedAccess {
  const needed = options.allowApplicationToken
    ? 'an OAuth access token or an application token is required'
    : 'an OAuth access token is required';
  let access: ReturnType<typeof authorizeProject>;
  try {
    access = authorizeProject(ctx, ctx.params.project_id!, scope);
  } catch (error) {
    // authorizeProject refuses a project token on an explicit ID with a hint about `@me`, and sets
    // `ctx.credential` only for OAuth and application tokens: a 403 without it is a project token,
    // and here `@me` would not help either, so say what would.
    if (error instanceof HttpError && error.status === 403 && ctx.credential === null) {
      fail(403, `project tokens cannot call this route: ${needed}`);
    }
    throw error;
  }
  const { token } = access;
  if (token.kind === 'project') fail(403, `project tokens cannot call this route: ${needed}`);
  if (token.kind === 'application' && !options.allowApplicationToken) {
    fail(403, `application tokens cannot call this route: ${needed}`);
  }
  const clientId = token.kind === 'oauth' ? token.authorization.client_id : token.application.client_id;
  const actingUser = access.actingUserId === null ? undefined : ctx.emu.state.users.get(access.actingUserId);
  // Application tokens only reach projects through existing users; an OAuth token can outlive its user.
  if (!actingUser) fail(404, 'the user who authorized the application no longer exists');
  return { project: access.project, clientId, actingUser };
}
