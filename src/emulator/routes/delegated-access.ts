import type { Scope } from '../../contract/limits.js';
import { authorizeProject } from '../auth.js';
import type { RequestContext } from '../http.js';
import { fail } from '../http.js';
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
  const accept = options.allowApplicationToken ? (['oauth', 'application'] as const) : (['oauth'] as const);
  const access = authorizeProject(ctx, ctx.params.project_id!, scope, { accept });
  const { token } = access;
  // `accept` leaves only delegated credentials; the check narrows the type.
  if (token.kind === 'project') return fail(403, 'project tokens cannot call this route');
  const clientId = token.kind === 'oauth' ? token.authorization.client_id : token.application.client_id;
  const actingUser = access.actingUserId === null ? undefined : ctx.emu.state.users.get(access.actingUserId);
  // Application tokens only reach projects through existing users; an OAuth token can outlive its user.
  if (!actingUser) fail(404, 'the user who authorized the application no longer exists');
  return { project: access.project, clientId, actingUser };
}
