import type { z } from 'zod';
import type { EmulatorContext } from './context.js';
import { chaosSchema, faultSchema, type ChaosStatus, type Fault } from './faults.js';
import { iso } from './clock.js';
import * as act from './admin-actions.js';
import type { AdminGrant, AdminProject, AdminUser, AdminVote } from './admin-views.js';
import type {
  EmulatorSeed,
  seedApplicationSchema,
  seedAuthorizationSchema,
  seedIntegrationSchema,
  seedProjectSchema,
  seedUserSchema,
  seedVoteSchema,
} from './seed.js';
import type { AnnouncementRecord, AppliedMetrics, DeliveryRecord, IntegrationRecord, RequestLogEntry } from './state.js';

;
export type { AdminGrant, AdminProject, AdminUser, AdminVote } from './admin-views.js';

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

/** Creates the admin functions over an emulator context (each one is in `admin-actions.ts`). */
export function createAdmin(emu: EmulatorContext): EmulatorAdmin {
  const { parseAdminInput } = act;
  return {
    createUser: (input) => act.createUser(emu, input),
    deleteUser: (userId) => act.deleteUser(emu, userId),
    createProject: (input) => act.createProject(emu, input),
    getProject: (projectId) => act.getProject(emu, projectId),
    deleteProject: (projectId) => act.deleteProject(emu, projectId),
    setProjectAdmin: (projectId, userId, isAdmin) => act.setProjectAdmin(emu, projectId, userId, isAdmin),
    castVote: (input) => act.castVote(emu, input),
    createApplication: (input) => act.createApplication(emu, input),
    rotateApplicationToken: (clientId) => act.rotateApplicationToken(emu, clientId),
    rotateClientSecret: (clientId) => act.rotateClientSecret(emu, clientId),
    createIntegration: (input) => act.createIntegration(emu, input),
    grantAuthorization: (input) => act.grantAuthorization(emu, input),
    revokeUserAuthorizations: (userId, clientId) => act.revokeUserAuthorizations(emu, userId, clientId),
    metrics: (projectId) => act.projectMetrics(emu, projectId),
    commands: (projectId) => act.projectCommands(emu, projectId),
    announcements: (projectId) => act.projectAnnouncements(emu, projectId),
    deliveries: (projectId) => emu.state.deliveries.filter((d) => d.project_id === projectId).map((d) => structuredClone(d)),
    injectFault: (input) => emu.faults.add(parseAdminInput(faultSchema, input)),
    faults: () => emu.faults.list(),
    clearFaults: () => emu.faults.clear(),
    setChaos: (input) => emu.faults.setChaos(parseAdminInput(chaosSchema, input)),
    chaos: () => emu.faults.chaosStatus(),
    clearChaos: () => emu.faults.clearChaos(),
    advanceClock: (seconds) => act.advanceClock(emu, seconds),
    now: () => ({ now: iso(emu.clock.now()) }),
    reset: (seed) => act.reset(emu, seed),
    requests: () => emu.state.requests.map((r) => ({ ...r })),
    clearRequests() {
      emu.state.requests.length = 0;
    },
    idle: () => emu.deliveries.idle(),
  };
}
