/**
 * Guild IDs and payloads for the fake Discord gateway: snowflakes spread over the shards, the
 * shard a guild belongs to, and the smallest guild objects discord.js, Eris and Oceanic.js take as
 * available.
 */

/** Milliseconds since the Discord epoch (2015) of the first generated guild: a date in 2024. */
const FIRST_GUILD_MS = 290_000_000_000n;

/**
 * The `n`th generated guild ID. Consecutive IDs differ by one millisecond in their timestamp
 * bits, so they fall on consecutive shards (`(id >> 22) % shardCount`): round robin.
 */
export function guildIdAt(n: number): string {
  return ((FIRST_GUILD_MS + BigInt(n)) << 22n).toString();
}

/** The shard a guild belongs to, as Discord computes it. */
export function shardOfGuild(guildId: string, shardCount: number): number {
  return Number((BigInt(guildId) >> 22n) % BigInt(shardCount));
}

/** The unavailable stub READY lists for each of a shard's guilds. */
export function unavailableGuild(id: string): { id: string; unavailable: true } {
  return { id, unavailable: true };
}

/**
 * A minimal GUILD_CREATE guild that discord.js marks available: it needs `channels` (without
 * them discord.js sets `available = false`) and the `@everyone` role; the rest are the fields a
 * real payload always has, so nothing in discord.js reads `undefined` where it expects a value.
 */
export function guildCreatePayload(id: string, ownerId: string): Record<string, unknown> {
  return {
    id,
    name: `Fake guild ${id.slice(-4)}`,
    icon: null,
    splash: null,
    discovery_splash: null,
    banner: null,
    description: null,
    owner_id: ownerId,
    afk_channel_id: null,
    afk_timeout: 300,
    verification_level: 0,
    default_message_notifications: 0,
    explicit_content_filter: 0,
    mfa_level: 0,
    nsfw_level: 0,
    premium_tier: 0,
    premium_subscription_count: 0,
    premium_progress_bar_enabled: false,
    preferred_locale: 'en-US',
    features: [],
    application_id: null,
    system_channel_id: null,
    system_channel_flags: 0,
    rules_channel_id: null,
    public_updates_channel_id: null,
    safety_alerts_channel_id: null,
    vanity_url_code: null,
    max_members: 500_000,
    max_video_channel_users: 25,
    joined_at: new Date().toISOString(),
    large: false,
    unavailable: false,
    member_count: 1,
    roles: [
      {
        id,
        name: '@everyone',
        color: 0,
        // Discord sends it since 2025; Oceanic.js reads it unguarded.
        colors: { primary_color: 0, secondary_color: null, tertiary_color: null },
        hoist: false,
        icon: null,
        unicode_emoji: null,
        position: 0,
        permissions: '0',
        managed: false,
        mentionable: false,
        flags: 0,
      },
    ],
    emojis: [],
    stickers: [],
    channels: [],
    threads: [],
    members: [],
    presences: [],
    voice_states: [],
    stage_instances: [],
    guild_scheduled_events: [],
    soundboard_sounds: [],
  };
}
