import { randomBytes } from 'node:crypto';
import { constants as zlibConstants, createDeflate, deflateSync, type Deflate } from 'node:zlib';
import type { FakeGateway, FakeGatewayEvent, FakeGatewayOptions, FakeGatewaySession } from './gateway-types.js';
import { guildCreatePayload, guildIdAt, shardOfGuild, unavailableGuild } from './guilds.js';
import { startWebSocketServer, type LocalWebSocket, type LocalWebSocketServer, type UpgradeRequest } from './websocket.js';

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
  socket: LocalWebSocket;
  compression: 'zlib-stream' | 'identify' | null;
  deflate: Deflate | undefined;
  /** What the deflater emitted for the payload being sent. */
  deflated: Buffer[];
  /** zlib-stream frames must leave in order, each one flushed: one at a time. */
  chain: Promise<void>;
  session: Session | undefined;
}

const OP = {
  dispatch: 0, heartbeat: 1, identify: 2, presence: 3, voice: 4, resume: 6, requestMembers: 8, invalidSession: 9, hello: 10, ack: 11,
};
const REPLAY_LOG_LIMIT = 1000;
/** What the fake cannot imitate, by opcode: the connection is refused with 4001 and this sentence. */
const REFUSED: Record<number, string> = {
  [OP.voice]: 'The fake Discord gateway does not imitate voice (op 4, voice state update).',
  [OP.requestMembers]: 'The fake Discord gateway does not imitate member requests (op 8, request guild members).',
};

const isOpen = (conn: Connection | undefined): conn is Connection => conn?.socket.isOpen === true;

/** The gateway itself; {@link startFakeGateway} makes one. */
class FakeGatewayServer implements FakeGateway {
  readonly url: string;
  readonly shardCount: number;
  readonly events: FakeGatewayEvent[] = [];
  onGuildsChanged: ((count: number) => void) | undefined;
  readonly #options: FakeGatewayOptions;
  readonly #userId: string;
  readonly #guilds = new Map<string, number>();
  readonly #latest = new Map<number, Session>();
  readonly #byId = new Map<string, Session>();
  readonly #connections = new Set<Connection>();
  readonly #holds: { ready: boolean; guilds: boolean };
  readonly #waiting = { ready: [] as (() => void)[], guilds: [] as (() => void)[] };
  #generated = 0;
  #server: LocalWebSocketServer | undefined;

  constructor(options: FakeGatewayOptions, url: string) {
    this.#options = options;
    this.url = url;
    this.shardCount = options.shardCount;
    this.#userId = options.userId ?? '300000000000000001';
    this.#holds = { ready: options.hold?.ready ?? false, guilds: options.hold?.guilds ?? false };
    const initial = options.guilds ?? 0;
    for (const id of typeof initial === 'number' ? Array.from({ length: initial }, () => this.#nextGuildId()) : initial) {
      this.#guilds.set(id, shardOfGuild(id, this.shardCount));
    }
  }

  listen(server: LocalWebSocketServer): void {
    this.#server = server;
  }

  #nextGuildId(): string {
    let id = guildIdAt(this.#generated++);
    while (this.#guilds.has(id)) id = guildIdAt(this.#generated++);
    return id;
  }

  /** discord.js sends the bare token; Eris and Oceanic.js send it as `Bot <token>`, in RESUME too. */
  #tokenMatches(sent: unknown): boolean {
    return sent === this.#options.token || sent === `Bot ${this.#options.token}`;
  }

  #send(conn: Connection, payload: unknown): void {
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
  }

  #dispatch(session: Session, t: string, d: unknown): void {
    session.seq += 1;
    const entry = { s: session.seq, t, d };
    session.log.push(entry);
    if (session.log.length > REPLAY_LOG_LIMIT) session.log.shift();
    if (session.connection) this.#send(session.connection, { op: OP.dispatch, ...entry });
  }

  /** The session a shard's guild events go to: only once READY went out (READY itself lists them). */
  #liveSessionOf(guildId: string): Session | undefined {
    const shardId = this.#guilds.get(guildId);
    const session = shardId === undefined ? undefined : this.#latest.get(shardId);
    return session?.readySent ? session : undefined;
  }

  async #gate(kind: 'ready' | 'guilds', delayMs: number | undefined): Promise<void> {
    if (delayMs) await new Promise((resolve) => setTimeout(resolve, delayMs));
    if (this.#holds[kind]) await new Promise<void>((resolve) => this.#waiting[kind].push(resolve));
  }

  #readyPayload(session: Session, own: string[]): Record<string, unknown> {
    return {
      v: 10,
      user: {
        id: this.#userId, username: 'Fake Bot', discriminator: '0000', global_name: null, avatar: null,
        bot: true, verified: true, mfa_enabled: false, flags: 0,
      },
      guilds: own.map(unavailableGuild),
      session_id: session.id,
      resume_gateway_url: this.url,
      shard: [session.shardId, this.shardCount],
      application: { id: this.#options.applicationId ?? this.#userId, flags: 0 },
      private_channels: [],
      relationships: [],
      presences: [],
      guild_join_requests: [],
      geo_ordered_rtc_regions: [],
      _trace: ['fake-discord-gateway'],
    };
  }

  async #identify(conn: Connection, d: Record<string, unknown>): Promise<void> {
    if (conn.session) return conn.socket.close(4005, 'Already authenticated.');
    if (!this.#tokenMatches(d.token)) return conn.socket.close(4004, 'Authentication failed.');
    const [shardId, count] = Array.isArray(d.shard) ? (d.shard as unknown[]) : [0, 1];
    if (typeof shardId !== 'number' || count !== this.shardCount || shardId < 0 || shardId >= this.shardCount) {
      return conn.socket.close(4010, `Invalid shard: the fake Discord gateway has ${this.shardCount} shard(s).`);
    }
    if (d.compress === true) conn.compression = 'identify';
    const previous = this.#latest.get(shardId);
    if (previous) this.#byId.delete(previous.id);
    const id = randomBytes(16).toString('hex');
    const session: Session = { id, shardId, seq: 0, log: [], connection: conn, readySent: false, guildsSent: false, resumes: 0 };
    this.#latest.set(shardId, session);
    this.#byId.set(session.id, session);
    conn.session = session;
    this.events.push({ type: 'identify', shardId });

    await this.#gate('ready', this.#options.readyDelayMs);
    if (this.#latest.get(shardId) !== session) return;
    const own = [...this.#guilds].filter(([, owner]) => owner === shardId).map(([id]) => id);
    this.#dispatch(session, 'READY', this.#readyPayload(session, own));
    session.readySent = true;

    await this.#gate('guilds', this.#options.guildCreateDelayMs);
    if (this.#latest.get(shardId) !== session) return;
    // Guilds left meanwhile are skipped; guilds joined meanwhile already had their GUILD_CREATE.
    for (const id of own) if (this.#guilds.has(id)) this.#dispatch(session, 'GUILD_CREATE', guildCreatePayload(id, this.#userId));
    session.guildsSent = true;
  }

  #resume(conn: Connection, d: Record<string, unknown>): void {
    const session = typeof d.session_id === 'string' ? this.#byId.get(d.session_id) : undefined;
    if (!session || !this.#tokenMatches(d.token) || typeof d.seq !== 'number') {
      this.events.push({ type: 'invalid_session', ...(session ? { shardId: session.shardId } : {}) });
      return this.#send(conn, { op: OP.invalidSession, d: false });
    }
    if (session.connection && session.connection !== conn) session.connection.socket.close(4000, 'Session resumed elsewhere.');
    session.connection = conn;
    conn.session = session;
    session.resumes += 1;
    this.events.push({ type: 'resume', shardId: session.shardId });
    for (const entry of session.log) if (entry.s > d.seq) this.#send(conn, { op: OP.dispatch, ...entry });
    this.#dispatch(session, 'RESUMED', {});
  }

  #refuse(conn: Connection, reason: string): void {
    this.events.push({ type: 'refused', ...(conn.session ? { shardId: conn.session.shardId } : {}), detail: reason });
    conn.socket.close(4001, reason);
  }

  #onMessage(conn: Connection, raw: string): void {
    let payload: { op?: unknown; d?: unknown };
    try {
      payload = JSON.parse(raw) as typeof payload;
    } catch {
      return conn.socket.close(4002, 'Error while decoding payload.');
    }
    const d = (payload.d ?? {}) as Record<string, unknown>;
    const op = payload.op;
    if (op === OP.heartbeat) return this.#send(conn, { op: OP.ack });
    if (op === OP.identify) return void this.#identify(conn, d);
    if (op === OP.resume) return this.#resume(conn, d);
    if (typeof op === 'number' && REFUSED[op] !== undefined) return this.#refuse(conn, REFUSED[op]);
    // Presence updates are taken and ignored: the fake sends no PRESENCE_UPDATE.
    if (op === OP.presence) return conn.session ? undefined : conn.socket.close(4003, 'Not authenticated.');
    this.#refuse(conn, `Unknown opcode ${JSON.stringify(op)}: the fake Discord gateway takes 1, 2, 3 and 6.`);
  }

  /** A new WebSocket connection: the query checked as Discord does, then HELLO. */
  accept(socket: LocalWebSocket, request: UpgradeRequest): void {
    const query = new URL(request.url, this.url).searchParams;
    const conn: Connection = { socket, compression: null, deflate: undefined, deflated: [], chain: Promise.resolve(), session: undefined };
    this.#connections.add(conn);
    this.events.push({ type: 'connect', detail: request.url });
    socket.onClose = (code) => {
      this.#connections.delete(conn);
      conn.deflate?.close();
      const session = conn.session;
      if (session?.connection === conn) session.connection = undefined;
      this.events.push({ type: 'disconnect', ...(session ? { shardId: session.shardId } : {}), detail: String(code) });
    };
    socket.onMessage = (data, isBinary) => {
      if (isBinary) return socket.close(4002, 'The fake gateway reads JSON text frames only.');
      this.#onMessage(conn, data.toString('utf8'));
    };
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
    const heartbeatInterval = this.#options.heartbeatIntervalMs ?? 41_250;
    this.#send(conn, { op: OP.hello, d: { heartbeat_interval: heartbeatInterval, _trace: ['fake-discord-gateway'] } });
  }

  #changed(): void {
    this.onGuildsChanged?.(this.#guilds.size);
  }

  addGuild(id?: string): string {
    const guildId = id ?? this.#nextGuildId();
    if (this.#guilds.has(guildId)) return guildId;
    this.#guilds.set(guildId, shardOfGuild(guildId, this.shardCount));
    const session = this.#liveSessionOf(guildId);
    if (session) this.#dispatch(session, 'GUILD_CREATE', guildCreatePayload(guildId, this.#userId));
    this.#changed();
    return guildId;
  }

  removeGuild(id: string): boolean {
    const session = this.#liveSessionOf(id);
    if (!this.#guilds.delete(id)) return false;
    if (session) this.#dispatch(session, 'GUILD_DELETE', { id });
    this.#changed();
    return true;
  }

  markUnavailable(id: string): void {
    const session = this.#liveSessionOf(id);
    if (session) this.#dispatch(session, 'GUILD_DELETE', { id, unavailable: true });
  }

  markAvailable(id: string): void {
    const session = this.#liveSessionOf(id);
    if (session) this.#dispatch(session, 'GUILD_CREATE', guildCreatePayload(id, this.#userId));
  }

  dispatchToGuild(guildId: string, type: string, data: unknown): boolean {
    const session = this.#liveSessionOf(guildId);
    if (session) this.#dispatch(session, type, data);
    return session !== undefined;
  }

  guildCount(shardId?: number): number {
    return this.guildIds(shardId).length;
  }

  guildIds(shardId?: number): string[] {
    return [...this.#guilds].filter(([, owner]) => shardId === undefined || owner === shardId).map(([id]) => id);
  }

  shardOf(guildId: string): number {
    return shardOfGuild(guildId, this.shardCount);
  }

  disconnectShard(shardId: number, options: { code?: number; invalidateSession?: boolean } = {}): number {
    const { code = 4000, invalidateSession = false } = options;
    const session = this.#latest.get(shardId);
    if (session && invalidateSession) this.#byId.delete(session.id);
    let closed = 0;
    for (const conn of this.#connections) {
      if (conn.session?.shardId !== shardId) continue;
      conn.socket.close(code, 'Disconnected by the test.');
      closed += 1;
    }
    return closed;
  }

  sessions(): FakeGatewaySession[] {
    return [...this.#latest.values()]
      .sort((a, b) => a.shardId - b.shardId)
      .map((s) => ({
        shardId: s.shardId, sessionId: s.id, connected: isOpen(s.connection),
        ready: s.readySent, guildsSent: s.guildsSent, resumes: s.resumes,
      }));
  }

  release(what?: 'ready' | 'guilds'): void {
    for (const kind of what ? [what] : (['ready', 'guilds'] as const)) {
      this.#holds[kind] = false;
      for (const resolve of this.#waiting[kind].splice(0)) resolve();
    }
  }

  async close(): Promise<void> {
    for (const conn of this.#connections) conn.socket.terminate();
    await this.#server?.close();
  }
}

/**
 * Starts a fake Discord gateway on 127.0.0.1 that a real discord.js, Eris or Oceanic.js Client logs
 * in to: HELLO, heartbeat ACKs, IDENTIFY -> READY (the shard's guilds as unavailable stubs) ->
 * GUILD_CREATE per guild, RESUME -> replay + RESUMED, and guild joins and leaves driven by the test.
 * What it cannot imitate (voice, member requests, unknown opcodes) closes the connection with 4001
 * and a reason saying so, and is listed in `events` as `refused`.
 */
export async function startFakeGateway(options: FakeGatewayOptions): Promise<FakeGateway> {
  let gateway: FakeGatewayServer | undefined;
  const port = options.port ? { port: options.port } : {};
  const server = await startWebSocketServer((socket, request) => gateway?.accept(socket, request), port);
  gateway = new FakeGatewayServer(options, `ws://127.0.0.1:${server.port}`);
  gateway.listen(server);
  return gateway;
}
