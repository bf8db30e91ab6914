import { readFileSync } from 'node:fs';
import type { RedisClientType, RedisClusterType, RedisSentinelType } from '@redis/client';
import { redisModule } from './client-module.js';
import {
  REDIS_CONNECTION_DEFAULTS,
  RedisUnavailableError,
  type RedisConnectionOptions,
  type RedisSentinelOptions,
  type RedisTlsOptions,
} from './connection-types.js';

/**
 * The two ways a connection reaches Redis, behind one small interface: one server at a URL (the
 * client reconnects to that address by itself), or the primary the Sentinels name (the client's
 * own Sentinel support follows it across a failover). The connection (connection-state.ts) decides
 * from their events when the server must be checked, and whether it can be used.
 */

/** What a link tells its connection. */
export interface LinkEvents {
  /** Connected (again): the server must be checked before it is used. */
  ready(): void;
  /** Not usable now, and why; with `keepReason`, a reason already known stays (the end of a reconnect the connection asked for). */
  lost(reason: string, keepReason?: boolean): void;
  /** A failure worth naming while down that changes nothing by itself (one Sentinel of three did not answer). */
  note(reason: string): void;
  /** Sentinel: the client gave up its first connection (no Sentinel answered): connect again later. */
  gaveUp(reason: string): void;
}

/** One server at a URL, the Sentinels' primary, or the primary of the agent's slot in a Redis Cluster (cluster.ts). */
export interface Link {
  readonly kind: 'server' | 'sentinel' | 'cluster';
  /**
   * What commands are sent to: the client, the Sentinel client (its `sendCommand` takes a
   * read-only flag first), or the cluster client (a key to route by, then that flag).
   */
  readonly target: RedisClientType | RedisSentinelType | RedisClusterType;
  /** Starts connecting; the client reconnects by itself afterwards. */
  connect(): void;
  /** URL: a new socket (the address resolved again: an endpoint that moved). Sentinel, cluster: nothing, the client follows. */
  reconnect(): void;
  close(): Promise<void>;
  /** Whether a command can be sent now (Sentinel: a connection to the primary is ready). */
  canSend(): boolean;
  /** `host:port` commands go to now, when known. */
  address(): string | undefined;
}

/** A Redis error as one line (the client's AggregateErrors carry their reasons inside). */
export function redisErrorText(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return redisErrorText(error.errors[0]);
  if (error instanceof Error) return error.message || error.name;
  return String(error);
}

/** The socket's TLS options for `tls`: none when off; the CA read from `caFile`, `setting` naming it in the error. */
export function tlsSocket(tls: RedisTlsOptions | undefined, enabled: boolean, setting: string) {
  if (!enabled) return {};
  let ca: string | undefined;
  if (tls?.caFile !== undefined) {
    try {
      ca = readFileSync(tls.caFile, 'utf8');
    } catch (error) {
      throw new RedisUnavailableError(`${setting}: cannot read ${tls.caFile} (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  }
  const servername = tls?.serverName;
  return { tls: true as const, ...(ca !== undefined ? { ca } : {}), ...(servername !== undefined ? { servername } : {}) };
}

/** The socket options every client of a connection shares: the connect timeout and the capped backoff. */
export function socketBase(options: RedisConnectionOptions) {
  const delays = options.reconnectDelaysMs ?? REDIS_CONNECTION_DEFAULTS.reconnectDelaysMs;
  return {
    connectTimeout: options.connectTimeoutMs ?? REDIS_CONNECTION_DEFAULTS.connectTimeoutMs,
    reconnectStrategy: (retries: number) => delays[Math.min(retries, delays.length - 1)] ?? 2_000,
  };
}

/** `host:port` of a URL, or undefined when it is none. */
function urlAddress(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port === '' ? '6379' : parsed.port}`;
  } catch {
    return undefined;
  }
}

/** One server at `options.url`: no offline queue, a timeout per command, reconnecting forever with a capped backoff. */
export function serverLink(options: RedisConnectionOptions & { url: string }, events: LinkEvents): Link {
  const tls = tlsSocket(options.tls, options.tls?.enabled ?? options.url.startsWith('rediss://'), 'state.redis.tls.caFile');
  const client = redisModule().createClient({
    url: options.url,
    name: options.clientName ?? REDIS_CONNECTION_DEFAULTS.clientName,
    disableOfflineQueue: true,
    commandOptions: { timeout: options.commandTimeoutMs ?? REDIS_CONNECTION_DEFAULTS.commandTimeoutMs },
    socket: { ...socketBase(options), ...tls },
  }) as unknown as RedisClientType;
  /** Set while a reconnect the connection asked for closes the old socket: that `end` is no outage. */
  let ownClose = false;
  client.on('ready', () => events.ready());
  // The client emits `error` for every failed attempt; without a listener Node would throw.
  client.on('error', (error: unknown) => events.lost(redisErrorText(error)));
  client.on('end', () => events.lost('connection closed', ownClose));
  client.on('reconnecting', () => events.lost('reconnecting', true));
  const connect = () => void client.connect().catch((error: unknown) => events.lost(redisErrorText(error)));
  const address = urlAddress(options.url);
  return {
    kind: 'server',
    target: client,
    connect,
    reconnect() {
      ownClose = true;
      try {
        if (client.isOpen) client.destroy();
      } finally {
        ownClose = false;
      }
      connect();
    },
    async close() {
      try {
        if (client.isOpen) await client.close();
      } catch {
        client.destroy();
      }
    },
    canSend: () => client.isReady,
    address: () => address,
  };
}

/** Turns the Sentinel client's words for an error about the primary's connection into the agent's. */
const PRIMARY_CLIENT_ERROR = /^Master Client \(([^)]*)\): (.*)$/s;

/** The Sentinels' primary, through the client's Sentinel support: it asks them for the primary, and follows a failover. */
export function sentinelLink(options: RedisConnectionOptions & { sentinel: RedisSentinelOptions }, events: LinkEvents): Link {
  const { sentinel: s } = options;
  const socket = socketBase(options);
  const name = options.clientName ?? REDIS_CONNECTION_DEFAULTS.clientName;
  const dataTls = tlsSocket(options.tls, options.tls?.enabled ?? false, 'state.redis.tls.caFile');
  const sentinelTls = s.tls === undefined ? dataTls : tlsSocket(s.tls, s.tls.enabled ?? false, 'state.redis.sentinel.tls.caFile');
  const auth = (username: string | undefined, password: string | undefined) => ({
    ...(username !== undefined ? { username } : {}),
    ...(password !== undefined ? { password } : {}),
  });
  const client = redisModule().createSentinel({
    name: s.masterName,
    sentinelRootNodes: s.nodes.map((node) => ({ host: node.host, port: node.port })),
    // The errors of the primary's connections come as `error` events, so an outage is seen at once.
    passthroughClientErrorEvents: true,
    commandOptions: { timeout: options.commandTimeoutMs ?? REDIS_CONNECTION_DEFAULTS.commandTimeoutMs },
    nodeClientOptions: { name, disableOfflineQueue: true, ...auth(options.username, options.password), socket: { ...socket, ...dataTls } },
    sentinelClientOptions: { name, ...auth(s.username, s.password), socket: { connectTimeout: socket.connectTimeout, ...sentinelTls } },
  }) as unknown as RedisSentinelType;
  client.on('ready', () => events.ready());
  client.on('reconnecting', () => events.lost('the primary changed: reconnecting to the new one'));
  client.on('end', () => events.lost('connection closed'));
  client.on('error', (error: unknown) => {
    const text = redisErrorText(error);
    const primary = PRIMARY_CLIENT_ERROR.exec(text);
    if (primary) events.lost(`the primary ${primary[1]} does not answer: ${primary[2]}`);
    else events.note(text);
  });
  const primary = () => {
    const node = client.getMasterNode();
    return node === undefined ? undefined : `${node.host}:${node.port}`;
  };
  return {
    kind: 'sentinel',
    target: client,
    connect() {
      if (client.isOpen) return;
      client.connect().catch((error: unknown) => events.gaveUp(redisErrorText(error)));
    },
    reconnect() {
      // The client asks the Sentinels again by itself (a READONLY reply, a lost primary).
    },
    async close() {
      if (!client.isOpen) return;
      try {
        await client.close();
      } catch {
        await client.destroy().catch(() => undefined);
      }
    },
    canSend: () => primary() !== undefined,
    address: primary,
  };
}
