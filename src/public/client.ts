/**
 * `listing-agent/client`: the listing service's client (every v1 and v0 operation, OAuth 2.1, one
 * error family) and the contract's constants. Use it without the agent:
 *
 * ```ts
 * import { createListingClient } from 'listing-agent/client';
 * const client = createListingClient({ projectToken: process.env.LISTING_AGENT_SERVICE_TOKEN! });
 * ```
 *
 * @packageDocumentation
 */
export * from '../api/index.js';
export {
  CONTRACT_LIMITS,
  DECISION_DEFAULTS,
  SUPPORTED_LOCALES,
  ANNOUNCEMENT_CATEGORIES,
  SCOPES,
  PLATFORM_TYPES,
  SERVICE_SOURCE,
  VOTE_SOURCES,
  VOTE_FIELD_LIMITS,
  SIGNATURE_HEADER,
  TRACE_HEADER,
} from '../contract/limits.js';
export type { SupportedLocale, AnnouncementCategory, Scope, Platform, ProjectType, VoteSource } from '../contract/limits.js';
export { decodeProjectToken } from '../contract/project-token.js';
export type { ProjectTokenPayload, DecodedProjectToken, ProjectTokenProblem } from '../contract/project-token.js';
