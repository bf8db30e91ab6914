import type { EmulatorAdmin } from '../admin.js';
import type { RequestContext } from '../http.js';
import { empty, fail, json, readJson } from '../http.js';
import type { Route } from '../router.js';

/** The body of an admin request: JSON, or nothing (treated as `{}`). */
function body(ctx: RequestContext): unknown {
  return ctx.rawBody.length === 0 ? {} : readJson(ctx);
}

/** The `/_emulator` admin API (JSON in and out), over the same functions as {@link EmulatorAdmin}. */
export function adminRoutes(admin: EmulatorAdmin): Route[] {
  const p = (ctx: RequestContext, name: string) => ctx.params[name]!;
  return [
    { method: 'POST', pattern: '/users', handler: (ctx) => json(201, admin.createUser(body(ctx) as never)) },
    { method: 'DELETE', pattern: '/users/:user_id', handler: (ctx) => (admin.deleteUser(p(ctx, 'user_id')), empty()) },
    {
      method: 'DELETE',
      pattern: '/users/:user_id/authorizations/:client_id',
      handler: (ctx) => (admin.revokeUserAuthorizations(p(ctx, 'user_id'), p(ctx, 'client_id')), empty()),
    },
    { method: 'POST', pattern: '/projects', handler: (ctx) => json(201, admin.createProject(body(ctx) as never)) },
    { method: 'GET', pattern: '/projects/:project_id', handler: (ctx) => json(200, admin.getProject(p(ctx, 'project_id'))) },
    { method: 'DELETE', pattern: '/projects/:project_id', handler: (ctx) => (admin.deleteProject(p(ctx, 'project_id')), empty()) },
    {
      method: 'PUT',
      pattern: '/projects/:project_id/admins/:user_id',
      handler: (ctx) => (admin.setProjectAdmin(p(ctx, 'project_id'), p(ctx, 'user_id'), true), empty()),
    },
    {
      method: 'DELETE',
      pattern: '/projects/:project_id/admins/:user_id',
      handler: (ctx) => (admin.setProjectAdmin(p(ctx, 'project_id'), p(ctx, 'user_id'), false), empty()),
    },
    { method: 'GET', pattern: '/projects/:project_id/metrics', handler: (ctx) => json(200, admin.metrics(p(ctx, 'project_id'))) },
    { method: 'GET', pattern: '/projects/:project_id/commands', handler: (ctx) => json(200, admin.commands(p(ctx, 'project_id'))) },
    {
      method: 'GET',
      pattern: '/projects/:project_id/announcements',
      handler: (ctx) => json(200, admin.announcements(p(ctx, 'project_id'))),
    },
    {
      method: 'GET',
      pattern: '/projects/:project_id/deliveries',
      handler: (ctx) => json(200, admin.deliveries(p(ctx, 'project_id'))),
    },
    { method: 'POST', pattern: '/votes', handler: (ctx) => json(201, admin.castVote(body(ctx) as never)) },
    { method: 'POST', pattern: '/applications', handler: (ctx) => json(201, admin.createApplication(body(ctx) as never)) },
    {
      method: 'POST',
      pattern: '/applications/:client_id/token',
      handler: (ctx) => json(200, admin.rotateApplicationToken(p(ctx, 'client_id'))),
    },
    {
      method: 'POST',
      pattern: '/applications/:client_id/secret',
      handler: (ctx) => json(200, admin.rotateClientSecret(p(ctx, 'client_id'))),
    },
    { method: 'POST', pattern: '/integrations', handler: (ctx) => json(201, admin.createIntegration(body(ctx) as never)) },
    { method: 'POST', pattern: '/authorizations', handler: (ctx) => json(201, admin.grantAuthorization(body(ctx) as never)) },
    { method: 'POST', pattern: '/faults', handler: (ctx) => json(201, admin.injectFault(body(ctx) as never)) },
    { method: 'GET', pattern: '/faults', handler: () => json(200, admin.faults()) },
    { method: 'DELETE', pattern: '/faults', handler: () => (admin.clearFaults(), empty()) },
    { method: 'POST', pattern: '/faults/chaos', handler: (ctx) => json(201, admin.setChaos(body(ctx) as never)) },
    { method: 'GET', pattern: '/faults/chaos', handler: () => json(200, admin.chaos()) },
    { method: 'DELETE', pattern: '/faults/chaos', handler: () => (admin.clearChaos(), empty()) },
    {
      method: 'POST',
      pattern: '/clock',
      handler: (ctx) => {
        const input = body(ctx) as { advance_seconds?: unknown };
        if (typeof input.advance_seconds !== 'number') fail(400, 'advance_seconds: must be a number of seconds');
        return json(200, admin.advanceClock(input.advance_seconds));
      },
    },
    { method: 'GET', pattern: '/clock', handler: () => json(200, admin.now()) },
    { method: 'POST', pattern: '/reset', handler: (ctx) => (admin.reset(body(ctx) as never), empty()) },
    { method: 'GET', pattern: '/requests', handler: () => json(200, admin.requests()) },
    { method: 'DELETE', pattern: '/requests', handler: () => (admin.clearRequests(), empty()) },
  ];
}
