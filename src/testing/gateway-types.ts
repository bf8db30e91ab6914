/** How the fake gateway starts. */
export interface FakeGatewayOptions {
  /** Shards the bot must identify with (`shard: [id, shardCount]`). */
  shardCount: number;
  /** The bot token IDENTIFY and RESUME must carry. */
  token: string;
  /** Initial guilds: a number of generated IDs spread round robin over the shards, or the IDs. Default 0. */
  guilds?: number | readonly string[];
  /** The bot user's ID (READY `user.id`). Default `300000000000000001`, the fake REST's application ID. */
  userId?: string;
  /** READY `application.id`. Default the same as `userId`. */
  applicationId?: string;
  /** HELLO's `heartbeat_interval`. Default 41250, Discord's. */
  heartbeatIntervalMs?: number;
  /** Wait this long after IDENTIFY before READY. Default 0. */
  readyDelayMs?: number;
  /** Wait this long after READY before the shard's GUILD_CREATEs. Default 0. */
  guildCreateDelayMs?: number;
  /**
   * Withhold READY (`ready`) or the GUILD_CREATEs after READY (`guilds`) until `release()`: a
   * test sees the Client exactly while its cache is still filling, with no timing guesswork.
   */
  hold?: { ready?: boolean; guilds?: boolean };
  /** Port to listen on. Default 0 (any free port). */
  port?: number;
}

/** One gateway session (the latest per shard). */
export interface FakeGatewaySession {
  shardId: number;
  sessionId: string;
  /** A socket is attached (false while the shard is disconnected, before it resumes). */
  connected: boolean;
  /** READY was sent. */
  ready: boolean;
  /** The GUILD_CREATEs after READY were sent. */
  guildsSent: boolean;
  /** Successful RESUMEs of this session. */
  resumes: number;
}

/**
 * Something the gateway did, in order, for assertions. `refused` is what it cannot imitate (voice,
 * member requests, an unknown opcode): the connection is closed with 4001 and `detail` says why.
 */
export interface FakeGatewayEvent {
  type: 'connect' | 'identify' | 'resume' | 'invalid_session' | 'disconnect' | 'refused';
  shardId?: number;
  detail?: string;
}

/** A fake of Discord's gateway (v10, JSON, optional zlib-stream or identify compression). */
export interface FakeGateway {
  /** `ws://127.0.0.1:<port>`; also READY's `resume_gateway_url`. */
  readonly url: string;
  readonly shardCount: number;
  readonly events: FakeGatewayEvent[];
  /** Joins a guild (a generated ID unless given): GUILD_CREATE to the owning shard's session. */
  addGuild(id?: string): string;
  /** Leaves a guild: GUILD_DELETE without `unavailable`. False when the bot was not in it. */
  removeGuild(id: string): boolean;
  /** An outage: GUILD_DELETE with `unavailable: true`; the bot is still in the guild. */
  markUnavailable(id: string): void;
  /** The end of an outage: GUILD_CREATE again. */
  markAvailable(id: string): void;
  /** Guilds the bot is in, all or one shard's. */
  guildCount(shardId?: number): number;
  guildIds(shardId?: number): string[];
  /** The shard a guild belongs to (`(id >> 22) % shardCount`, as Discord computes it). */
  shardOf(guildId: string): number;
  /**
   * Closes the shard's sockets with `code` (default 4000, after which discord.js resumes; 1000
   * makes it identify again). `invalidateSession` also forgets the session, so a RESUME gets
   * INVALID_SESSION. Returns how many sockets were closed.
   */
  disconnectShard(shardId: number, options?: { code?: number; invalidateSession?: boolean }): number;
  /** The latest session of each shard that identified, by shard ID. */
  sessions(): FakeGatewaySession[];
  /**
   * Sends a dispatch (`INTERACTION_CREATE`, say) to the live session of the shard that owns
   * `guildId`. False when that shard has no session past READY.
   */
  dispatchToGuild(guildId: string, type: string, data: unknown): boolean;
  /** Sends what `hold` withheld (one kind or both) and stops holding it. */
  release(what?: 'ready' | 'guilds'): void;
  /** Called after every guild change (the fake REST keeps `approximate_guild_count` true with it). */
  onGuildsChanged: ((count: number) => void) | undefined;
  /** Stops listening and drops every connection. */
  close(): Promise<void>;
}
