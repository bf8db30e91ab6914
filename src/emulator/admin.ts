import { z } from 'zod';
import { CONTRACT_LIMITS, type Scope } from '../contract/limits.js';
import type { EmulatorContext } from './context.js';
import { chaosSchema, faultSchema, type ChaosStatus, type Fault } from './faults.js';
import { iso } from './clock.js';
import { HttpError } from './http.js';
import { randomToken } from './ids.js';
import { addProject, addUser, addVote } from './model.js';
import { grantAuthorization, revokeAuthorization } from './oauth-core.js';
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
import type {
  AnnouncementRecord,
  AppliedMetrics,
  DeliveryRecord,
  IntegrationRecord,
  ProjectRecord,
  RequestLogEntry,
  UserRecord,
  VoteRecord,
} from './state.js';
import { createEmptyState } from './state.js';

/** A user as the admin API returns it. */
export interface AdminUser {
  id: string;
  username: string;
  platform_id: string;
  avatar: string | null;
}

/** A project as the admin API returns it (every stored field, unlike the service's views). */
export interface AdminProject {
  id: string;
  platform: ProjectRecord['platform'];
  type: ProjectRecord['type'];
  platform_id: string;
  name: string;
  owner_user_id: string | null;
  admin_user_ids: string[];
  headline: Record<string, string>;
  page_content: Record<string, string>;
  tags: string[];
  review_status: string;
  stats: ProjectRecord['stats'];
  current_metrics: Record<string, number | null>;
  created_at: string;
}

/** A vote as the admin API returns it. */
export interface AdminVote {
  id: string;
  project_id: string;
  user_id: string;
  platform_id: string;
  weight: number;
  created_at: string;
  expires_at: string;
}

/** Tokens from {@link EmulatorAdmin.grantAuthorization}. */
export interface AdminGrant {
  access_token: string;
  refresh_token: string;
  expires_in: number;
  scope: string;
}

/**
 * Drives the emulator from tests and scripts; the `/_emulator` HTTP API calls the same functions.
 * Invalid input throws an `HttpError` (400 with the field path, 404 for unknown IDs).
 */
export interface EmulatorAdmin {
  createUser(input: z.input<typeof seedUserSchema>): AdminUser;
  deleteUser(userId: string): void;
  createProject(input: z.input<typeof seedProjectSchema>): { project: AdminProject; project_token: string };
  getProject(projectId: string): AdminProject;
  deleteProject(projectId: string): void;
  /** Makes a user an admin of a project (true) or takes that away (false). */
  setProjectAdmin(projectId: string, userId: string, isAdmin: boolean): void;
  /** Records a vote and delivers `vote.create` to the project's webhooks. */
  castVote(input: z.input<typeof seedVoteSchema>): AdminVote;
  createApplication(input: z.input<typeof seedApplicationSchema>): { client_id: string; client_secret: string };
  /** Rotates the application token (the old one stops working at once). */
  rotateApplicationToken(clientId: string): { application_token: string };
  /** Rotates the client secret (the old one stops working at once). */
  rotateClientSecret(clientId: string): { client_secret: string };
  createIntegration(input: z.input<typeof seedIntegrationSchema>): IntegrationRecord;
  /** A live authorization without the browser flow; replaces one of the same app, user and project. */
  grantAuthorization(input: z.input<typeof seedAuthorizationSchema>): AdminGrant;
  /** The user revokes the application in their settings: every authorization of theirs for it ends. */
  revokeUserAuthorizations(userId: string, clientId: string): void;
  metrics(projectId: string): AppliedMetrics[];
  commands(projectId: string): unknown[];
  announcements(projectId: string): AnnouncementRecord[];
  deliveries(projectId: string): DeliveryRecord[];
  injectFault(input: z.input<typeof faultSchema>): Fault;
  faults(): Fault[];
  clearFaults(): void;
  /** Turns random faults on (a seeded probability per matching request); see {@link chaosSchema}. */
  setChaos(input: z.input<typeof chaosSchema>): ChaosStatus;
  /** The chaos setting and its counters (requests seen, faults injected, per kind). */
  chaos(): ChaosStatus;
  /** Turns random faults off; the counters stay readable. */
  clearChaos(): void;
  /** Moves the emulator clock forward; returns the new time (ISO 8601). */
  advanceClock(seconds: number): { now: string };
  now(): { now: string };
  /** Empties the state and loads `seed` (none: an empty emulator). */
  reset(seed?: EmulatorSeed): void;
  requests(): RequestLogEntry[];
  clearRequests(): void;
  /** Resolves once no delivery is in flight or waiting for a retry. */
  idle(): Promise<void>;
}

/** Parses `input` with `schema`, or throws 400 naming every problem with its path. */
export function parseAdminInput<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => `${issue.path.join('.') || '(body)'}: ${issue.message}`);
  throw new HttpError(400, problems.join('; '));
}

function adminUser(user: UserRecord): AdminUser {
  return { id: user.id, username: user.username, platform_id: user.platform_id, avatar: user.avatar };
}

function adminProject(project: ProjectRecord): AdminProject {
  return {
    id: project.id,
    platform: project.platform,
    type: project.type,
    platform_id: project.platform_id,
    name: project.name,
    owner_user_id: project.owner_user_id,
    admin_user_ids: [...project.admin_user_ids],
    headline: { ...project.headline },
    page_content: { ...project.page_content },
    tags: [...project.tags],
    review_status: project.review_status,
    stats: { ...project.stats, shards: [...project.stats.shards] },
    current_metrics: { ...project.current_metrics },
    created_at: iso(project.created_at),
  };
}

function adminVote(vote: VoteRecord): AdminVote {
  return {
    id: vote.id,
    project_id: vote.project_id,
    user_id: vote.user_id,
    platform_id: vote.platform_id,
    weight: vote.weight,
    created_at: iso(vote.created_at),
    expires_at: iso(vote.expires_at),
  };
}

/** Creates the admin functions over an emulator context. */
export function createAdmin(emu: EmulatorContext): EmulatorAdmin {
  const project = (projectId: string): ProjectRecord => {
    const found = emu.state.projects.get(projectId);
    if (!found) throw new HttpError(404, `no project ${projectId}`);
    return found;
  };
  const user = (userId: string): UserRecord => {
    const found = emu.state.users.get(userId);
    if (!found) throw new HttpError(404, `no user ${userId}`);
    return found;
  };
  const application = (clientId: string) => {
    const found = emu.state.applications.get(clientId);
    if (!found) throw new HttpError(404, `no application ${clientId}`);
    return found;
  };
  const taken = (exists: boolean, what: string) => {
    if (exists) throw new HttpError(409, `${what} already exists`);
  };

  const admin: EmulatorAdmin = {
    createUser(input) {
      const data = parseAdminInput(seedUserSchema, input);
      if (data.id) taken(emu.state.users.has(data.id), `user ${data.id}`);
      return adminUser(addUser(emu, data));
    },
    deleteUser(userId) {
      user(userId);
      emu.state.users.delete(userId);
    },
    createProject(input) {
      const data = parseAdminInput(seedProjectSchema, input);
      if (data.id) taken(emu.state.projects.has(data.id), `project ${data.id}`);
      if (data.platform_id !== undefined) {
        const duplicate = [...emu.state.projects.values()].some((p) => p.platform_id === data.platform_id);
        taken(duplicate, `a project with platform_id ${data.platform_id}`);
      }
      if (data.owner_user_id !== undefined) user(data.owner_user_id);
      for (const id of data.admin_user_ids ?? []) user(id);
      const { project: created, projectToken } = addProject(emu, data);
      return { project: adminProject(created), project_token: projectToken };
    },
    getProject: (projectId) => adminProject(project(projectId)),
    deleteProject(projectId) {
      project(projectId);
      emu.state.projects.delete(projectId);
      emu.state.projectTokens.delete(projectId);
      for (const [id, webhook] of emu.state.webhooks) if (webhook.project_id === projectId) emu.state.webhooks.delete(id);
      for (const [id, connection] of emu.state.connections) if (connection.project_id === projectId) emu.state.connections.delete(id);
    },
    setProjectAdmin(projectId, userId, isAdmin) {
      const found = project(projectId);
      user(userId);
      found.admin_user_ids = found.admin_user_ids.filter((id) => id !== userId);
      if (isAdmin) found.admin_user_ids.push(userId);
      else if (found.owner_user_id === userId) found.owner_user_id = null;
    },
    castVote(input) {
      const data = parseAdminInput(seedVoteSchema, input);
      const vote = addVote(emu, {
        project: project(data.project_id),
        user: user(data.user_id),
        ...(data.weight !== undefined ? { weight: data.weight } : {}),
        ...(data.created_at !== undefined ? { created_at: Date.parse(data.created_at) } : {}),
      });
      return adminVote(vote);
    },
    createApplication(input) {
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
    },
    rotateApplicationToken(clientId) {
      const found = application(clientId);
      found.application_token = randomToken('lapp_');
      return { application_token: found.application_token };
    },
    rotateClientSecret(clientId) {
      const found = application(clientId);
      found.client_secret = randomToken('lcs_');
      return { client_secret: found.client_secret };
    },
    createIntegration(input) {
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
    },
    grantAuthorization(input) {
      const data = parseAdminInput(seedAuthorizationSchema, input);
      application(data.client_id);
      user(data.user_id);
      project(data.project_id);
      const issued = grantAuthorization(emu, {
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
    },
    revokeUserAuthorizations(userId, clientId) {
      for (const authorization of emu.state.authorizations.values()) {
        if (authorization.user_id === userId && authorization.client_id === clientId && !authorization.revoked) {
          revokeAuthorization(emu, authorization);
        }
      }
    },
    metrics: (projectId) => project(projectId).metrics.map((m) => ({ ...m })),
    commands: (projectId) => structuredClone(project(projectId).commands),
    announcements: (projectId) => project(projectId).announcements.map((a) => ({ ...a })),
    deliveries: (projectId) =>
      emu.state.deliveries.filter((d) => d.project_id === projectId).map((d) => structuredClone(d)),
    injectFault: (input) => emu.faults.add(parseAdminInput(faultSchema, input)),
    faults: () => emu.faults.list(),
    clearFaults: () => emu.faults.clear(),
    setChaos: (input) => emu.faults.setChaos(parseAdminInput(chaosSchema, input)),
    chaos: () => emu.faults.chaosStatus(),
    clearChaos: () => emu.faults.clearChaos(),
    advanceClock(seconds) {
      if (!Number.isFinite(seconds) || seconds < 0) {
        throw new HttpError(400, 'advance_seconds: must be a number of seconds, 0 or more');
      }
      return { now: iso(emu.clock.advance(seconds)) };
    },
    now: () => ({ now: iso(emu.clock.now()) }),
    reset(seed) {
      const data = parseAdminInput(seedSchema, seed ?? {});
      emu.deliveries.close();
      Object.assign(emu.state, createEmptyState());
      emu.rateLimiter.reset();
      emu.faults.clear();
      emu.deliveries = emu.reopenDeliveries();
      for (const u of data.users) admin.createUser(u);
      for (const p of data.projects) admin.createProject(p);
      for (const a of data.applications) admin.createApplication(a);
      for (const i of data.integrations) admin.createIntegration(i);
      for (const g of data.authorizations) admin.grantAuthorization(g);
      for (const v of data.votes) admin.castVote(v);
    },
    requests: () => emu.state.requests.map((r) => ({ ...r })),
    clearRequests() {
      emu.state.requests.length = 0;
    },
    idle: () => emu.deliveries.idle(),
  };
  return admin;
}
