import { z } from 'zod';
import { CONTRACT_LIMITS, type Scope } from '../contract/limits.js';
import type { EmulatorContext } from './context.js';
import { iso } from './clock.js';
import { HttpError } from './http.js';
import { randomToken } from './ids.js';
import { addProject, addUser, addVote } from './model.js';
import { grantAuthorization as grant, revokeAuthorization } from './oauth-core.js';
import {
  type EmulatorSeed,
  seedApplicationSchema,
  seedAuthorizationSchema,
  seedIntegrationSchema,
  seedProjectSchema,
  seedSchema,
  seedUserSchema,
  seedVoteSchema,
} from './seed.js';
import type { AnnouncementRecord, ApplicationRecord, AppliedMetrics, IntegrationRecord, ProjectRecord, UserRecord } from './state.js';
import { createEmptyState } from './state.js';
import { adminProject, adminUser, adminVote, type AdminGrant, type AdminProject, type AdminUser, type AdminVote } from './admin-views.js';

/**
 * What the admin API does to the emulator's state, one function per action over the context:
 * input checked against the seed schemas (400 naming each field), unknown IDs 404, taken IDs 409.
 */

/** Parses `input` with `schema`, or throws 400 naming every problem with its path. */
export function parseAdminInput<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => `${issue.path.join('.') || '(body)'}: ${issue.message}`);
  throw new HttpError(400, problems.join('; '));
}

function project(emu: EmulatorContext, projectId: string): ProjectRecord {
  const found = emu.state.projects.get(projectId);
  if (!found) throw new HttpError(404, `no project ${projectId}`);
  return found;
}

function user(emu: EmulatorContext, userId: string): UserRecord {
  const found = emu.state.users.get(userId);
  if (!found) throw new HttpError(404, `no user ${userId}`);
  return found;
}

function application(emu: EmulatorContext, clientId: string): ApplicationRecord {
  const found = emu.state.applications.get(clientId);
  if (!found) throw new HttpError(404, `no application ${clientId}`);
  return found;
}

function taken(exists: boolean, what: string): void {
  if (exists) throw new HttpError(409, `${what} already exists`);
}

/** See `EmulatorAdmin.createUser`. */
export function createUser(emu: EmulatorContext, input: z.input<typeof seedUserSchema>): AdminUser {
  const data = parseAdminInput(seedUserSchema, input);
  if (data.id) taken(emu.state.users.has(data.id), `user ${data.id}`);
  return adminUser(addUser(emu, data));
}

/** See `EmulatorAdmin.deleteUser`. */
export function deleteUser(emu: EmulatorContext, userId: string): void {
  user(emu, userId);
  emu.state.users.delete(userId);
}

/** See `EmulatorAdmin.createProject`. */
export function createProject(
  emu: EmulatorContext,
  input: z.input<typeof seedProjectSchema>,
): { project: AdminProject; project_token: string } {
  const data = parseAdminInput(seedProjectSchema, input);
  if (data.id) taken(emu.state.projects.has(data.id), `project ${data.id}`);
  if (data.platform_id !== undefined) {
    const duplicate = [...emu.state.projects.values()].some((p) => p.platform_id === data.platform_id);
    taken(duplicate, `a project with platform_id ${data.platform_id}`);
  }
  if (data.owner_user_id !== undefined) user(emu, data.owner_user_id);
  for (const id of data.admin_user_ids ?? []) user(emu, id);
  const { project: created, projectToken } = addProject(emu, data);
  return { project: adminProject(created), project_token: projectToken };
}

/** See `EmulatorAdmin.getProject`. */
export function getProject(emu: EmulatorContext, projectId: string): AdminProject {
  return adminProject(project(emu, projectId));
}

/** See `EmulatorAdmin.deleteProject`: its token, webhooks and connections go with it. */
export function deleteProject(emu: EmulatorContext, projectId: string): void {
  project(emu, projectId);
  emu.state.projects.delete(projectId);
  emu.state.projectTokens.delete(projectId);
  for (const [id, webhook] of emu.state.webhooks) if (webhook.project_id === projectId) emu.state.webhooks.delete(id);
  for (const [id, connection] of emu.state.connections) if (connection.project_id === projectId) emu.state.connections.delete(id);
}

/** See `EmulatorAdmin.setProjectAdmin`. */
export function setProjectAdmin(emu: EmulatorContext, projectId: string, userId: string, isAdmin: boolean): void {
  const found = project(emu, projectId);
  user(emu, userId);
  found.admin_user_ids = found.admin_user_ids.filter((id) => id !== userId);
  if (isAdmin) found.admin_user_ids.push(userId);
  else if (found.owner_user_id === userId) found.owner_user_id = null;
}

/** See `EmulatorAdmin.castVote`. */
export function castVote(emu: EmulatorContext, input: z.input<typeof seedVoteSchema>): AdminVote {
  const data = parseAdminInput(seedVoteSchema, input);
  const vote = addVote(emu, {
    project: project(emu, data.project_id),
    user: user(emu, data.user_id),
    ...(data.weight !== undefined ? { weight: data.weight } : {}),
    ...(data.created_at !== undefined ? { created_at: Date.parse(data.created_at) } : {}),
  });
  return adminVote(vote);
}

/** See `EmulatorAdmin.createApplication`. */
export function createApplication(
  emu: EmulatorContext,
  input: z.input<typeof seedApplicationSchema>,
): { client_id: string; client_secret: string } {
  const data = parseAdminInput(seedApplicationSchema, input);
  const clientId = data.client_id ?? emu.nextId();
  taken(emu.state.applications.has(clientId), `application ${clientId}`);
  const clientSecret = data.client_secret ?? randomToken('lcs_');
  emu.state.applications.set(clientId, {
    client_id: clientId,
    client_secret: clientSecret,
    redirect_uris: data.redirect_uris,
    application_token: data.application_token ?? null,
    created_at: emu.clock.now(),
  });
  return { client_id: clientId, client_secret: clientSecret };
}

/** See `EmulatorAdmin.rotateApplicationToken`. */
export function rotateApplicationToken(emu: EmulatorContext, clientId: string): { application_token: string } {
  const found = application(emu, clientId);
  found.application_token = randomToken('lapp_');
  return { application_token: found.application_token };
}

/** See `EmulatorAdmin.rotateClientSecret`. */
export function rotateClientSecret(emu: EmulatorContext, clientId: string): { client_secret: string } {
  const found = application(emu, clientId);
  found.client_secret = randomToken('lcs_');
  return { client_secret: found.client_secret };
}

/** See `EmulatorAdmin.createIntegration`. */
export function createIntegration(emu: EmulatorContext, input: z.input<typeof seedIntegrationSchema>): IntegrationRecord {
  const data = parseAdminInput(seedIntegrationSchema, input);
  const integration: IntegrationRecord = {
    id: data.id ?? emu.nextId(),
    name: data.name,
    description: data.description,
    icon_url: data.icon_url,
    url: data.url,
  };
  taken(emu.state.integrations.has(integration.id), `integration ${integration.id}`);
  emu.state.integrations.set(integration.id, integration);
  return { ...integration };
}

/** See `EmulatorAdmin.grantAuthorization`. */
export function grantAuthorization(emu: EmulatorContext, input: z.input<typeof seedAuthorizationSchema>): AdminGrant {
  const data = parseAdminInput(seedAuthorizationSchema, input);
  application(emu, data.client_id);
  user(emu, data.user_id);
  project(emu, data.project_id);
  const issued = grant(emu, {
    ...data,
    scopes: data.scopes as Scope[],
    accessTokenSeconds: CONTRACT_LIMITS.accessTokenSeconds,
  });
  return {
    access_token: issued.access_token,
    refresh_token: issued.refresh_token,
    expires_in: issued.expires_in,
    scope: issued.authorization.scopes.join(' '),
  };
}

/** See `EmulatorAdmin.revokeUserAuthorizations`. */
export function revokeUserAuthorizations(emu: EmulatorContext, userId: string, clientId: string): void {
  for (const authorization of emu.state.authorizations.values()) {
    if (authorization.user_id === userId && authorization.client_id === clientId && !authorization.revoked) {
      revokeAuthorization(emu, authorization);
    }
  }
}

/** See `EmulatorAdmin.advanceClock`. */
export function advanceClock(emu: EmulatorContext, seconds: number): { now: string } {
  if (!Number.isFinite(seconds) || seconds < 0) {
    throw new HttpError(400, 'advance_seconds: must be a number of seconds, 0 or more');
  }
  return { now: iso(emu.clock.advance(seconds)) };
}

/** See `EmulatorAdmin.reset`: the state emptied, then the seed loaded through the same actions. */
export function reset(emu: EmulatorContext, seed?: EmulatorSeed): void {
  const data = parseAdminInput(seedSchema, seed ?? {});
  emu.deliveries.close();
  Object.assign(emu.state, createEmptyState());
  emu.rateLimiter.reset();
  emu.faults.clear();
  emu.deliveries = emu.reopenDeliveries();
  for (const u of data.users) createUser(emu, u);
  for (const p of data.projects) createProject(emu, p);
  for (const a of data.applications) createApplication(emu, a);
  for (const i of data.integrations) createIntegration(emu, i);
  for (const g of data.authorizations) grantAuthorization(emu, g);
  for (const v of data.votes) castVote(emu, v);
}

/** See `EmulatorAdmin.metrics`: copies of the metrics the project's posts applied. */
export function projectMetrics(emu: EmulatorContext, projectId: string): AppliedMetrics[] {
  return project(emu, projectId).metrics.map((m) => ({ ...m }));
}

/** See `EmulatorAdmin.commands`. */
export function projectCommands(emu: EmulatorContext, projectId: string): unknown[] {
  return structuredClone(project(emu, projectId).commands);
}

/** See `EmulatorAdmin.announcements`. */
export function projectAnnouncements(emu: EmulatorContext, projectId: string): AnnouncementRecord[] {
  return project(emu, projectId).announcements.map((a) => ({ ...a }));
}
