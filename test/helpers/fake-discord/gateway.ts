import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { constants as zlibConstants, createDeflate, deflateSync, type Deflate } from 'node:zlib';
import { afterEach } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import { guildCreatePayload, guildIdAt, shardOfGuild, unavailableGuild } from './guilds.js';

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

/** Something the gateway did, in order, for assertions. */
export interface FakeGatewayEvent {
  type: 'connect' | 'identify' | 'resume' | 'invalid_session' | 'disconnect';
  shardId?: number;
  detail?: string;
}

/** A fake of Discord's gateway (v10, JSON, optional zlib-stream or identify compression). */
export interface FakeGateway {
  /** `ws://127.0.0.1:<port>`; also READY's `resume_gateway_url`. */
  url: string;
  readonly shardCount: number;
  events: FakeGatewayEvent[];
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
  /** Called after every guild change (index.ts keeps the REST `approximate_guild_count` true). */
  onGuildsChanged?: (count: number) => void;
  close(): Promise<void>;
}

interface Session {
  id: string;
  shardId: number;
  seq: number;
  /** Dispatches sent in this session, replayed after a RESUME from the client's `seq`. */
  log: { s: number; t: string; d: unknown }[];
  connection: Connection | undefined;
  readySent: boolean;
  guildsSent: boolean;
  resumes: number;
}

interface Connection {
  socket: WebSocket;
  compression: 'zlib-stream' | 'identify' | null;
  deflate: Deflate | undefined;
  /** What the deflater emitted for the payload being sent. */
  deflated: Buffer[];
  /** zlib-stream frames must leave in order, each one flushed: one at a time. */
  chain: Promise<void>;
  session: Session | undefined;
}

const OP = { dispatch: 0, heartbeat: 1, identify: 2, presence: 3, voice: 4, resume: 6, requestMembers: 8, invalidSession: 9, hello: 10, ack: 11 } as const;
const REPLAY_LOG_LIMIT = 1000;

const open: FakeGateway[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((gateway) => gateway.close()));
});

/**
 * Starts a fake Discord gateway on 127.0.0.1:0 that a real discord.js Client logs in to: HELLO,
 * heartbeat ACKs, IDENTIFY -> READY (the shard's guilds as unavailable stubs) -> GUILD_CREATE per
 * guild, RESUME -> replay + RESUMED, and guild joins/leaves driven by the test. Closed after each test.
 */
export async function startFakeGateway(options: FakeGatewayOptions): Promise<FakeGateway> {
  const { shardCount, token } = options;
  const userId = options.userId ?? '300000000000000001';
  const applicationId = options.applicationId ?? userId;
  const heartbeatInterval = options.heartbeatIntervalMs ?? 41_250;
  const guilds = new Map<string, number>();
  let generated = 0;
  const nextGuildId = () => {
    let id = guildIdAt(generated++);
    while (guilds.has(id)) id = guildIdAt(generated++);
    return id;
  };
  const initial = options.guilds ?? 0;
  for (const id of typeof initial === 'number' ? Array.from({ length: initial }, nextGuildId) : initial) {
    guilds.set(id, shardOfGuild(id, shardCount));
  }

  const latest = new Map<number, Session>();
  const byId = new Map<string, Session>();
  const connections = new Set<Connection>();
  const events: FakeGatewayEvent[] = [];
  const holds = { ready: options.hold?.ready ?? false, guilds: options.hold?.guilds ?? false };
  const waiting = { ready: [] as (() => void)[], guilds: [] as (() => void)[] };

  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve, reject) => {
    wss.once('listening', resolve);
    wss.once('error', reject);
  });
  const url = `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`;

  // discord.js sends the bare token; Eris and Oceanic.js send it as `Bot <token>`, in RESUME too.
  const tokenMatches = (sent: unknown) => sent === token || sent === `Bot ${token}`;

  const isOpen = (conn: Connection | undefined): conn is Connection => conn !== undefined && conn.socket.readyState === conn.socket.OPEN;

  const send = (conn: Connection, payload: unknown) => {
    if (!isOpen(conn)) return;
    const json = JSON.stringify(payload);
    if (conn.compression === 'identify') return conn.socket.send(deflateSync(json));
    const deflate = conn.deflate;
    if (!deflate) return conn.socket.send(json);
    // Discord's zlib-stream: one deflate context per connection, each payload ends in a sync
    // flush. One payload at a time, so every chunk the deflater emits belongs to this payload.
    conn.chain = conn.chain.then(
      () =>
        new Promise<void>((resolve) => {
          deflate.write(json);
          deflate.flush(zlibConstants.Z_SYNC_FLUSH, () =>
            // Data events may trail the flush callback by a tick.
            setImmediate(() => {
              const frame = Buffer.concat(conn.deflated.splice(0));
              if (isOpen(conn)) conn.socket.send(frame);
              resolve();
            }),
          );
        }),
    );
  };

  const dispatch = (session: Session, t: string, d: unknown) => {
    session.seq += 1;
    const entry = { s: session.seq, t, d };
    session.log.push(entry);
    if (session.log.length > REPLAY_LOG_LIMIT) session.log.shift();
    if (session.connection) send(session.connection, { op: OP.dispatch, ...entry });
  };

  /** The session a shard's guild events go to: only once READY went out (READY itself lists them). */
  const liveSessionOf = (guildId: string) => {
    const shardId = guilds.get(guildId);
    const session = shardId === undefined ? undefined : latest.get(shardId);
    return session?.readySent ? session : undefined;
  };

  const gate = async (kind: 'ready' | 'guilds', delayMs: number | undefined) => {
    if (delayMs) await new Promise((resolve) => setTimeout(resolve, delayMs));
    if (holds[kind]) await new Promise<void>((resolve) => waiting[kind].push(resolve));
  };

  const identify = async (conn: Connection, d: Record<string, unknown>) => {
    if (conn.session) return conn.socket.close(4005, 'Already authenticated.');
    if (!tokenMatches(d.token)) return conn.socket.close(4004, 'Authentication failed.');
    const shard = d.shard;
    const [shardId, count] = Array.isArray(shard) ? (shard as unknown[]) : [0, 1];
    if (typeof shardId !== 'number' || count !== shardCount || shardId < 0 || shardId >= shardCount) {
      return conn.socket.close(4010, 'Invalid shard.');
    }
    if (d.compress === true) conn.compression = 'identify';
    const previous = latest.get(shardId);
    if (previous) byId.delete(previous.id);
    const session: Session = { id: randomBytes(16).toString('hex'), shardId, seq: 0, log: [], connection: conn, readySent: false, guildsSent: false, resumes: 0 };
    latest.set(shardId, session);
    byId.set(session.id, session);
    conn.session = session;
    events.push({ type: 'identify', shardId });

    await gate('ready', options.readyDelayMs);
    if (latest.get(shardId) !== session) return;
    const own = [...guilds].filter(([, owner]) => owner === shardId).map(([id]) => id);
    dispatch(session, 'READY', {
      v: 10,
      user: { id: userId, username: 'Fake Bot', discriminator: '0000', global_name: null, avatar: null, bot: true, verified: true, mfa_enabled: false, flags: 0 },
      guilds: own.map(unavailableGuild),
      session_id: session.id,
      resume_gateway_url: url,
      shard: [shardId, shardCount],
      application: { id: applicationId, flags: 0 },
      private_channels: [],
      relationships: [],
      presences: [],
      guild_join_requests: [],
      geo_ordered_rtc_regions: [],
      _trace: ['fake-discord-gateway'],
    });
    session.readySent = true;

    await gate('guilds', options.guildCreateDelayMs);
    if (latest.get(shardId) !== session) return;
    // Guilds left meanwhile are skipped; guilds joined meanwhile already had their GUILD_CREATE.
    for (const id of own) if (guilds.has(id)) dispatch(session, 'GUILD_CREATE', guildCreatePayload(id, userId));
    session.guildsSent = true;
  };

  const resume = (conn: Connection, d: Record<string, unknown>) => {
    const session = typeof d.session_id === 'string' ? byId.get(d.session_id) : undefined;
    if (!session || !tokenMatches(d.token) || typeof d.seq !== 'number') {
      events.push({ type: 'invalid_session', shardId: session?.shardId });
      return send(conn, { op: OP.invalidSession, d: false });
    }
    if (session.connection && session.connection !== conn) session.connection.socket.close(4000, 'Session resumed elsewhere.');
    session.connection = conn;
    conn.session = session;
    session.resumes += 1;
    events.push({ type: 'resume', shardId: session.shardId });
    const from = d.seq;
    for (const entry of session.log) if (entry.s > from) send(conn, { op: OP.dispatch, ...entry });
    dispatch(session, 'RESUMED', {});
  };

  const onMessage = (conn: Connection, raw: string) => {
    let payload: { op?: unknown; d?: unknown };
    try {
      payload = JSON.parse(raw) as typeof payload;
    } catch {
      return conn.socket.close(4002, 'Error while decoding payload.');
    }
    const d = (payload.d ?? {}) as Record<string, unknown>;
    switch (payload.op) {
      case OP.heartbeat:
        return send(conn, { op: OP.ack });
      case OP.identify:
        return void identify(conn, d);
      case OP.resume:
        return resume(conn, d);
      case OP.presence:
      case OP.voice:
      case OP.requestMembers:
        if (!conn.session) return conn.socket.close(4003, 'Not authenticated.');
        return;
      default:
        return conn.socket.close(4001, 'Unknown opcode.');
    }
  };

  wss.on('connection', (socket: WebSocket, req: IncomingMessage) => {
    const query = new URL(req.url ?? '/', url).searchParams;
    const conn: Connection = { socket, compression: null, deflate: undefined, deflated: [], chain: Promise.resolve(), session: undefined };
    connections.add(conn);
    events.push({ type: 'connect', detail: req.url });
    socket.on('close', (code) => {
      connections.delete(conn);
      conn.deflate?.close();
      const session = conn.session;
      if (session?.connection === conn) session.connection = undefined;
      events.push({ type: 'disconnect', shardId: session?.shardId, detail: String(code) });
    });
    socket.on('message', (data, isBinary) => {
      if (isBinary) return socket.close(4002, 'The fake gateway reads JSON text frames only.');
      onMessage(conn, (Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer)).toString('utf8'));
    });
    if ((query.get('v') ?? '10') !== '10') return socket.close(4012, 'Invalid API version: the fake gateway speaks v10.');
    if ((query.get('encoding') ?? 'json') !== 'json') return socket.close(4002, 'The fake gateway supports encoding=json only.');
    const compress = query.get('compress');
    if (compress === 'zlib-stream') {
      conn.compression = 'zlib-stream';
      conn.deflate = createDeflate();
      conn.deflate.on('data', (chunk: Buffer) => void conn.deflated.push(chunk));
    } else if (compress !== null) {
      return socket.close(4002, `The fake gateway does not support compress=${compress}.`);
    }
    send(conn, { op: OP.hello, d: { heartbeat_interval: heartbeatInterval, _trace: ['fake-discord-gateway'] } });
  });

  const changed = () => gateway.onGuildsChanged?.(guilds.size);

  const gateway: FakeGateway = {
    url,
    shardCount,
    events,
    addGuild(id) {
      const guildId = id ?? nextGuildId();
      if (guilds.has(guildId)) return guildId;
      guilds.set(guildId, shardOfGuild(guildId, shardCount));
      const session = liveSessionOf(guildId);
      if (session) dispatch(session, 'GUILD_CREATE', guildCreatePayload(guildId, userId));
      changed();
      return guildId;
    },
    removeGuild(id) {
      const session = liveSessionOf(id);
      if (!guilds.delete(id)) return false;
      if (session) dispatch(session, 'GUILD_DELETE', { id });
      changed();
      return true;
    },
    markUnavailable(id) {
      const session = liveSessionOf(id);
      if (session) dispatch(session, 'GUILD_DELETE', { id, unavailable: true });
    },
    markAvailable(id) {
      const session = liveSessionOf(id);
      if (session) dispatch(session, 'GUILD_CREATE', guildCreatePayload(id, userId));
    },
    dispatchToGuild(guildId, type, data) {
      const session = liveSessionOf(guildId);
      if (session) dispatch(session, type, data);
      return session !== undefined;
    },
    guildCount: (shardId) => gateway.guildIds(shardId).length,
    guildIds: (shardId) => [...guilds].filter(([, owner]) => shardId === undefined || owner === shardId).map(([id]) => id),
    shardOf: (guildId) => shardOfGuild(guildId, shardCount),
    disconnectShard(shardId, { code = 4000, invalidateSession = false } = {}) {
      const session = latest.get(shardId);
      if (session && invalidateSession) byId.delete(session.id);
      let closed = 0;
      for (const conn of connections) {
        if (conn.session?.shardId !== shardId) continue;
        conn.socket.close(code, 'Disconnected by the test.');
        closed += 1;
      }
      return closed;
    },
    sessions: () =>
      [...latest.values()]
        .sort((a, b) => a.shardId - b.shardId)
        .map((s) => ({ shardId: s.shardId, sessionId: s.id, connected: isOpen(s.connection), ready: s.readySent, guildsSent: s.guildsSent, resumes: s.resumes })),
    release(what) {
      for (const kind of what ? [what] : (['ready', 'guilds'] as const)) {
        holds[kind] = false;
        for (const resolve of waiting[kind].splice(0)) resolve();
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const conn of connections) conn.socket.terminate();
        wss.close(() => resolve());
      }),
  };
  open.push(gateway);
  return gateway;
}
