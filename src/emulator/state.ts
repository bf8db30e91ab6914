import type { AnnouncementCategory, Platform, ProjectType, Scope } from '../contract/limits.js';

/** A service user. Every emulated user has a Discord connection (`platform_id`). */
export interface UserRecord {
  id: string;
  username: string;
  /** The user's Discord Snowflake. */
  platform_id: string;
  /** Avatar URL, or null. */
  avatar: string | null;
  created_at: number;
  /** v0 profile fields (`GET /api/users/:user_id`). */
  profile: UserProfileFields;
}

/** The v0 user profile fields beyond id and username. */
export interface UserProfileFields {
  discriminator: string;
  defAvatar: string;
  bio?: string;
  banner?: string;
  color?: string;
  social: { youtube?: string; reddit?: string; twitter?: string; instagram?: string; github?: string };
  supporter: boolean;
  certifiedDev: boolean;
  mod: boolean;
  webMod: boolean;
  admin: boolean;
}

/** One metrics application, in applied order (what `GET /_emulator/projects/:id/metrics` lists). */
export interface AppliedMetrics {
  /** `v1` for PATCH metrics, `v1-batch` for a batch entry, `v0` for v0 stats. */
  source: 'v1' | 'v1-batch' | 'v0';
  /** Emulator time of application, ISO 8601. */
  applied_at: string;
  /** A batch entry's timestamp, when it had one. */
  timestamp: string | null;
  /** The payload as applied (v1 metrics fields, or v0 `{server_count, shards, shard_id, shard_count}`). */
  metrics: Record<string, unknown>;
}

/** An announcement as stored. */
export interface AnnouncementRecord {
  title: string;
  content: string;
  category: AnnouncementCategory;
  created_at: string;
  /** The user whose authorization granted the scope (null for a project token). */
  author_user_id: string | null;
}

/** v0 bot fields the emulator cannot derive; overridable by seed. */
export interface BotExtras {
  discriminator: string;
  avatar: string | null;
  defAvatar: string | null;
  lib: string;
  prefix: string;
  website: string | null;
  support: string | null;
  github: string | null;
  guilds: string[];
  invite: string | null;
  certifiedBot: boolean;
  vanity: string | null;
  donationbotguildid: string;
}

/** A listed project. */
export interface ProjectRecord {
  id: string;
  platform: Platform;
  type: ProjectType;
  platform_id: string;
  name: string;
  /** Headline per locale; `en` is what the detail shows. */
  headline: Record<string, string>;
  page_content: Record<string, string>;
  tags: string[];
  review_status: string;
  review_score: number;
  review_count: number;
  owner_user_id: string | null;
  /** Users who may manage the project besides the owner. */
  admin_user_ids: string[];
  created_at: number;
  commands: unknown[];
  announcements: AnnouncementRecord[];
  metrics: AppliedMetrics[];
  /** Current counts, shared by v1 metrics and v0 stats. */
  stats: { server_count: number | null; shard_count: number | null; shards: number[] };
  /** Current v1 metrics fields for non-bot platforms (member_count, player_count, ...). */
  current_metrics: Record<string, number | null>;
  bot: BotExtras;
}

/** A vote, stored in ascending creation order per project. */
export interface EmulatorVoteRecord {
  id: string;
  /** Insertion sequence; breaks ties between equal `created_at`. */
  seq: number;
  project_id: string;
  user_id: string;
  /** The voter's Discord Snowflake. */
  platform_id: string;
  weight: number;
  created_at: number;
  expires_at: number;
}

/** An OAuth application. */
export interface ApplicationRecord {
  client_id: string;
  client_secret: string;
  redirect_uris: string[];
  /** The static application token, null until first rotated. */
  application_token: string | null;
  created_at: number;
}

/** One user's grant of one project to one application. */
export interface AuthorizationRecord {
  id: string;
  client_id: string;
  user_id: string;
  project_id: string;
  scopes: Scope[];
  /** The current refresh token; rotated on every refresh. */
  refresh_token: string;
  revoked: boolean;
  created_at: number;
}

/** An issued OAuth access token. */
export interface AccessTokenRecord {
  token: string;
  authorization_id: string;
  expires_at: number;
  revoked: boolean;
}

/** An authorization code waiting to be exchanged. */
export interface AuthorizationCodeRecord {
  code: string;
  client_id: string;
  redirect_uri: string;
  code_challenge: string;
  user_id: string;
  project_id: string;
  scopes: Scope[];
  expires_at: number;
  used: boolean;
  /** The authorization the code was exchanged for (revoked if the code is replayed). */
  authorization_id: string | null;
}

/** A registered webhook: made by an application, or by an integration connection. */
export interface WebhookRecord {
  id: string;
  project_id: string;
  /** The application that created it, or null for one made by an integration connection. */
  client_id: string | null;
  connection_id: string | null;
  label: string;
  url: string;
  secret: string;
  created_at: number;
}

/** An integration available to every project (admin-defined). */
export interface IntegrationRecord {
  id: string;
  name: string;
  description: string;
  icon_url: string;
  /** Where the handshake (`integration.create`) and `integration.delete` are sent. */
  url: string;
}

/** An integration connected to a project. */
export interface ConnectionRecord {
  id: string;
  integration_id: string;
  project_id: string;
  client_id: string;
  user_id: string;
  webhook_id: string;
  secret: string;
  created_at: number;
}

/** One try of a delivery. */
export interface DeliveryAttempt {
  at: string;
  status: number | null;
  error: string | null;
  duration_ms: number;
}

/** A signed event sent (or being sent) to a URL. */
export interface DeliveryRecord {
  id: string;
  trace_id: string;
  project_id: string;
  webhook_id: string | null;
  url: string;
  type: string;
  body: { type: string; data: unknown };
  attempts: DeliveryAttempt[];
  /** `pending` while tries remain; `delivered` on a 2xx; `failed` when retries ran out or a 4xx came. */
  outcome: 'pending' | 'delivered' | 'failed';
}

/** One request the emulator answered (admin routes excluded). */
export interface RequestLogEntry {
  at: string;
  method: string;
  path: string;
  query: string;
  status: number;
  /** What authenticated the request, if anything. */
  credential: 'project' | 'oauth' | 'application' | 'client' | null;
  /** Set when an injected fault answered instead of the route. */
  fault: boolean;
}

/** The whole in-memory state of one emulator. */
export interface EmulatorState {
  users: Map<string, UserRecord>;
  /** Projects in creation order (Map keeps insertion order; paging relies on it). */
  projects: Map<string, ProjectRecord>;
  /** Project tokens by project ID. */
  projectTokens: Map<string, string>;
  votes: EmulatorVoteRecord[];
  voteSeq: number;
  applications: Map<string, ApplicationRecord>;
  authorizations: Map<string, AuthorizationRecord>;
  accessTokens: Map<string, AccessTokenRecord>;
  codes: Map<string, AuthorizationCodeRecord>;
  webhooks: Map<string, WebhookRecord>;
  integrations: Map<string, IntegrationRecord>;
  connections: Map<string, ConnectionRecord>;
  deliveries: DeliveryRecord[];
  requests: RequestLogEntry[];
}

/** A fresh, empty state. */
export function createEmptyState(): EmulatorState {
  return {
    users: new Map(),
    projects: new Map(),
    projectTokens: new Map(),
    votes: [],
    voteSeq: 0,
    applications: new Map(),
    authorizations: new Map(),
    accessTokens: new Map(),
    codes: new Map(),
    webhooks: new Map(),
    integrations: new Map(),
    connections: new Map(),
    deliveries: [],
    requests: [],
  };
}

/** The project whose platform ID is `platformId`, if listed. */
export function findProjectByPlatformId(state: EmulatorState, platformId: string): ProjectRecord | undefined {
  for (const project of state.projects.values()) if (project.platform_id === platformId) return project;
  return undefined;
}

/** The user whose Discord Snowflake is `platformId`. */
export function findUserByPlatformId(state: EmulatorState, platformId: string): UserRecord | undefined {
  for (const user of state.users.values()) if (user.platform_id === platformId) return user;
  return undefined;
}

/** True when `userId` owns or administers the project (who may grant it and keep app tokens alive). */
export function canManageProject(project: ProjectRecord, userId: string): boolean {
  return project.owner_user_id === userId || project.admin_user_ids.includes(userId);
}
