/**
 * `listing-agent/emulator`: a faithful local emulator of the listing service (v1, v0, OAuth 2.1,
 * signed webhook deliveries, injected faults) for tests and demos, on 127.0.0.1 and a free port.
 *
 * ```ts
 * import { startEmulator } from 'listing-agent/emulator';
 * await using emulator = await startEmulator();
 * ```
 *
 * @packageDocumentation
 */
import { startEmulator as startWithContext, type RunningEmulator, type StartEmulatorOptions } from '../emulator/index.js';

/** Starts a local listing-service emulator over node:http, on 127.0.0.1 and a free port unless told otherwise. */
export const startEmulator: (options?: StartEmulatorOptions) => Promise<RunningEmulator> = startWithContext;

export { DEFAULT_SETTINGS, DEFAULT_SEED, seedSchema } from '../emulator/index.js';
export type {
  StartEmulatorOptions,
  RunningEmulator,
  EmulatorUrls,
  EmulatorAdmin,
  AdminGrant,
  AdminProject,
  AdminUser,
  AdminVote,
  EmulatorSettings,
  EmulatorSeed,
} from '../emulator/index.js';

// The types that the signatures above name, so that a bot can name them too.
export type { chaosSchema, ChaosStatus, Fault, faultSchema } from '../emulator/faults.js';
export type {
  seedApplicationSchema,
  seedAuthorizationSchema,
  seedIntegrationSchema,
  seedProjectSchema,
  seedUserSchema,
  seedVoteSchema,
} from '../emulator/seed.js';
export type {
  AccessTokenRecord,
  AnnouncementRecord,
  ApplicationRecord,
  AppliedMetrics,
  AuthorizationCodeRecord,
  AuthorizationRecord,
  BotExtras,
  ConnectionRecord,
  DeliveryAttempt,
  DeliveryRecord,
  EmulatorVoteRecord,
  IntegrationRecord,
  ProjectRecord,
  RequestLogEntry,
  UserProfileFields,
  UserRecord,
  WebhookRecord,
} from '../emulator/state.js';
