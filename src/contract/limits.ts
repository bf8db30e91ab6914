/**
 * Every number of the contract's Limits table and of decisions.md, in one place, so that one edit
 * changes the emulator and the client together.
 */

/** Numbers stated by `listing-service-api.md` (Limits table and endpoint rules). */
export const CONTRACT_LIMITS = {
  /** Authorization code lifetime, single use. */
  authorizationCodeSeconds: 60,
  /** OAuth access token lifetime (seven days). */
  accessTokenSeconds: 604_800,
  codeVerifierMinLength: 43,
  codeVerifierMaxLength: 128,
  redirectUrisPerApplication: 10,
  /** One announcement per four hours. */
  announcementCooldownSeconds: 4 * 60 * 60,
  batchMinEntries: 1,
  batchMaxEntries: 100,
  /** A batch entry's timestamp may be at most this far in the future. */
  batchTimestampMaxFutureSeconds: 5 * 60,
  /** `startDate` of GET votes may be at most one year in the past. */
  votesStartDateMaxAgeSeconds: 365 * 24 * 60 * 60,
  applicationTokenProjectsPageSize: 100,
  headlineMinLength: 3,
  headlineMaxLength: 140,
  pageContentMinLength: 300,
  pageContentMaxLength: 50_000,
  announcementTitleMinLength: 3,
  announcementTitleMaxLength: 100,
  announcementContentMinLength: 10,
  announcementContentMaxLength: 2_000,
  webhookLabelMaxLength: 100,
  webhookUrlMaxLength: 2_048,
  v0BotRequestsPerMinute: 60,
  v0BotsListDefaultLimit: 50,
  v0BotsListMaxLimit: 500,
  /** `GET /bots/:bot_id/check` answers 1 for a vote in this window. */
  v0VoteWindowSeconds: 12 * 60 * 60,
} as const;

/** Values the contract leaves open, fixed by decisions.md (emulator defaults; all configurable). */
export const DECISION_DEFAULTS = {
  votesPageSize: 100,
  /** A vote expires this long after `created_at`. */
  voteExpirySeconds: 12 * 60 * 60,
  webhooksPerProject: 5,
  v1RequestsPerSecondPerCredential: 100,
  /** Metrics and commands routes, per project. */
  v1ProjectWritesPerMinute: 60,
  commandsMaxItems: 100,
  commandNameMaxLength: 32,
  commandDescriptionMaxLength: 100,
  commandOptionsMax: 25,
  /** The service waits this long for a 2xx from a webhook receiver. */
  deliveryTimeoutMs: 5_000,
  /** A timeout or 5xx is retried after these delays; a 4xx is final. */
  deliveryRetryDelaysMs: [1_000, 2_000, 4_000] as readonly number[],
  /** Legacy v0 deliveries are retried up to this many times. */
  v0DeliveryMaxRetries: 10,
  /** Receivers accept a signature timestamp this far from their clock, both directions. */
  signatureToleranceSeconds: 300,
} as const;

/** Locale keys accepted by `headline` and `page_content`. */
export const SUPPORTED_LOCALES = [
  'en', 'de', 'fr', 'pt', 'tr', 'hi', 'ja', 'ar', 'nl', 'ko', 'it', 'es', 'ru', 'uk', 'vi', 'zh',
] as const;
export type SupportedLocale = (typeof SUPPORTED_LOCALES)[number];

/** Announcement categories; the first is the default. */
export const ANNOUNCEMENT_CATEGORIES = ['announcement', 'event', 'new_feature'] as const;
export type AnnouncementCategory = (typeof ANNOUNCEMENT_CATEGORIES)[number];

/** Every scope the contract names. */
export const SCOPES = [
  'project.information.read',
  'project.information.write',
  'project.announcements.write',
  'project.metrics.write',
  'project.votes.read',
  'project.webhooks.read',
  'project.webhooks.write',
  'project.integrations.read',
  'project.integrations.write',
  'user.identify',
  'user.projects.read',
  'user.projects.write',
] as const;
export type Scope = (typeof SCOPES)[number];

/** Platforms and the project types each allows on creation (`POST /users/@me/projects`). */
export const PLATFORM_TYPES = {
  discord: ['bot', 'server'],
  roblox: ['game'],
  minecraft: ['game_server'],
} as const satisfies Record<string, readonly string[]>;
export type Platform = keyof typeof PLATFORM_TYPES;
export type ProjectType = (typeof PLATFORM_TYPES)[Platform][number];

/** The wire word for the service's own user-ID namespace in `?source=` (decisions.md). */
export const SERVICE_SOURCE = 'topgg';
/** Values of `?source=` on `GET /projects/:id/votes/:user_id`. */
export const VOTE_SOURCES = [SERVICE_SOURCE, 'discord'] as const;
export type VoteSource = (typeof VOTE_SOURCES)[number];

/** Discord and the service use Snowflakes: 17 to 20 digits. */
export const SNOWFLAKE_PATTERN = /^\d{17,20}$/;

/**
 * What the agent takes of a vote from the service, on both roads (the cursor's records, signed and
 * legacy deliveries): a compromised or buggy service is the threat (issue 34, item 5). A vote
 * outside these is refused at the edge, with its reason logged.
 * - Service IDs (the voter's user ID, the project, the vote's `data.id`) are Snowflakes, 17 to 20
 *   digits ({@link SNOWFLAKE_PATTERN}): the contract calls the service's own identifiers
 *   Snowflake-style, and decisions.md gives Snowflakes 17 to 20 digits.
 * - A platform ID (the voter's, a project's) is digits, at most `platformIdMaxDigits`: a Discord
 *   Snowflake has 17 to 20, a Roblox ID fewer.
 * - `weight` is a whole number from `weightMin` to `weightMax`: the contract names 2 on weekends,
 *   1 otherwise; the bound leaves room for a multiplier the service adds without taking 1e+308.
 * - `created_at` is at most `createdAtMaxFutureSeconds` ahead of the agent's clock (the skew the
 *   contract allows a metrics batch's timestamp, and the doctor's clock check fails beyond) and at
 *   most `createdAtMaxAgeSeconds` old (the votes cursor lists one year).
 * - `expires_at` is after `created_at`, by at most `lifetimeMaxSeconds`: a vote lasts 12 h
 *   (decisions.md), and a vote's key is kept until its expiry, so a far expiry would keep it for ever.
 */
export const VOTE_FIELD_LIMITS = {
  platformIdMaxDigits: 20,
  weightMin: 1,
  weightMax: 10,
  createdAtMaxFutureSeconds: 5 * 60,
  createdAtMaxAgeSeconds: CONTRACT_LIMITS.votesStartDateMaxAgeSeconds,
  lifetimeMaxSeconds: 7 * 24 * 60 * 60,
} as const;

/** Delivery headers of signed webhooks (decisions.md). */
export const SIGNATURE_HEADER = 'x-topgg-signature';
export const TRACE_HEADER = 'x-topgg-trace';

/**
 * How many servers one shard can hold, for the plausibility bound on pushed counts (issue 34: a
 * shard reporting 2,147,483,647 servers, the contract's int32 ceiling, was taken and posted).
 * Discord refuses a shard's session when the shard would hold more than `discordPerShard`
 * servers (close code 4011, "sharding required"); a shard keeps the servers that join it until it
 * identifies again, so `plausiblePerShard`, twice that, is the most a push may report for one
 * shard. With the push endpoint's 100,000 shards at most, the total stays within int32.
 */
export const SHARD_SERVER_LIMITS = {
  discordPerShard: 2_500,
  plausiblePerShard: 5_000,
} as const;
