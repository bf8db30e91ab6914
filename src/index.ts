/**
 * listing-agent's public surface. Every export is named here; nothing else is public.
 */

// The listing-service client (v1, v0, OAuth 2.1).
export * from './api/index.js';

// The error family's root.
export { ListingAgentError, ValidationError } from './errors.js';
export type { FieldIssue } from './errors.js';

// The local emulator of the listing service.
export { startEmulator, DEFAULT_SETTINGS, DEFAULT_SEED, seedSchema } from './emulator/index.js';
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
} from './emulator/index.js';

// The contract's rules, shared by every part.
export {
  CONTRACT_LIMITS,
  DECISION_DEFAULTS,
  SUPPORTED_LOCALES,
  ANNOUNCEMENT_CATEGORIES,
  SCOPES,
  PLATFORM_TYPES,
  SERVICE_SOURCE,
  VOTE_SOURCES,
  SIGNATURE_HEADER,
  TRACE_HEADER,
} from './contract/limits.js';
export type { SupportedLocale, AnnouncementCategory, Scope, Platform, ProjectType, VoteSource } from './contract/limits.js';
export { decodeProjectToken } from './contract/project-token.js';
export type { ProjectTokenPayload, DecodedProjectToken, ProjectTokenProblem } from './contract/project-token.js';

// Signed webhook deliveries.
export { signDelivery, computeSignature } from './webhooks/signature.js';
export type { SignDeliveryOptions } from './webhooks/signature.js';
