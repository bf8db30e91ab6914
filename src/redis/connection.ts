import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type { RedisClientType } from '@redis/client';
import { silentLogger, type AgentLogger } from '../log/agent-logger.js';
import { ListingAgentError } from '../errors.js';
import { redisModule } from './client-module.js';
import { describeRedisUrl, scriptSha } from './keys.js';

/**
 * One connection to Redis for everything an agent keeps there (state, vote ledger, lease, shard
 * reports, reward stream). Built on the official client (`@redis/client`), set up so that an
 * outage is visible instead of hidden: commands fail at once while Redis is away (no offline
 * queue that would hold a webhook past its deadline), each command has a timeout, and the client
 * reconnects forever with a capped backoff.
 */

/** Options of {@link createRedisConnection}. */
export interface RedisConnectionOptions {
  /** `redis://[user:password@]host:port[/db]`, or `rediss://` for TLS. */
  url: string;
  /** Prefix of every key (`state.redis.prefix`). Default `listing-agent:`. */
  prefix?: string;
  /** TLS: default on for `rediss://`; `caFile` a PEM of the CA; `serverName` the certificate's name. */
  tls?: { enabled?: boolean | undefined; caFile?: string | undefined; serverName?: string | undefined };
  /** Time for one connection attempt. Default 5 000 ms. */
  connectTimeoutMs?: number;
  /** Time for one command before it fails (a hung Redis must not hang the agent). Default 2 000 ms. */
  commandTimeoutMs?: number;
  /** Waits between reconnection attempts (the last one repeats). Default 100, 250, 500, 1 000, 2 000 ms. */
  reconnectDelaysMs?: readonly number[];
  /** The name Redis shows for this client (`CLIENT LIST`). Default `listing-agent`. */
  clientName?: string;
  logger?: AgentLogger;
}

/** The defaults of {@link RedisConnectionOptions}. */
export const REDIS_CONNECTION_DEFAULTS = {
  prefix: 'listing-agent:',
  connectTimeoutMs: 5_000,
  commandTimeoutMs: 2_000,
  reconnectDelaysMs: [100, 250, 500, 1_000, 2_000] as readonly number[],
  clientName: 'listing-agent',
} as const;

/** The client type the connection exposes (no modules; the client's default protocol, RESP3 in @redis/client 6). */
type RedisClient = RedisClientType;

/** Events of a {@link RedisConnection}: `up` when connected (again), `down` with the reason when lost. */
export interface RedisConnectionEvents {
  up: [];
  down: [reason: string];
}

/** A Lua script run by SHA, loaded again when Redis forgot it (a restart, `SCRIPT FLUSH`). */
export interface RedisScript {
  run(keys: readonly string[], args: readonly (string | number)[]): Promise<unknown>;
}

/** The agent's connection to Redis. */
export interface RedisConnection extends EventEmitter<RedisConnectionEvents> {
  /** The official client, connected or reconnecting. Commands fail at once while it is down. */
  readonly client: RedisClient;
  /** The key prefix, `listing-agent:` by default. */
  readonly prefix: string;
  /** `prefix + parts.join(':')`. */
  key(...parts: string[]): string;
  /** True while connected. */
  readonly isUp: boolean;
  /** Why it is down (the last error), or undefined while up. */
  readonly downReason: string | undefined;
  /** Starts connecting in the background (reconnecting forever); safe to call more than once, and after `close()`. */
  start(): void;
  /** Resolves once connected (at once when up); rejects after `timeoutMs` or when `signal` aborts. */
  whenUp(options?: { timeoutMs?: number; signal?: AbortSignal }): Promise<void>;
  /** A Lua script bound to this connection. */
  script(source: string): RedisScript;
  /** `redis redis://host:port/db` with any password removed, for logs and `/readyz`. */
  describe(): string;
  /** Closes the connection (pending commands are answered first). Safe to call more than once; `start()` may follow. */
  close(): Promise<void>;
}

/** Redis could not be reached, or refused a command: the message says what, never the URL's password. */
export class RedisUnavailableError extends ListingAgentError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('redis_unavailable', message, options);
  }
}

/**
 * A default agent ID, `<hostname>/<8 random hex digits>`: unique per process without reading
 * `process` (the daemon passes `<hostname>/<pid>` instead, from the CLI).
 */
export function defaultAgentId(): string {
  return `${hostname()}/${randomUUID().slice(0, 8)}`;
}

/** Turns any Redis failure into a {@link RedisUnavailableError} naming what was being done. */
export function redisFailure(doing: string, error: unknown): RedisUnavailableError {
  if (error instanceof RedisUnavailableError) return error;
  const detail = error instanceof Error ? error.message : String(error);
  return new RedisUnavailableError(`Redis: could not ${doing}: ${detail}`, { cause: error });
}

/** The client `options` describe: no offline queue, a timeout per command, reconnecting forever with a capped backoff. */
function createClientFor(options: RedisConnectionOptions): RedisClient {
  const delays = options.reconnectDelaysMs ?? REDIS_CONNECTION_DEFAULTS.reconnectDelaysMs;
  const tlsEnabled = options.tls?.enabled ?? options.url.startsWith('rediss://');
  let ca: string | undefined;
  if (tlsEnabled && options.tls?.caFile !== undefined) {
    try {
      ca = readFileSync(options.tls.caFile, 'utf8');
    } catch (error) {
      throw new RedisUnavailableError(
        `state.redis.tls.caFile: cannot read ${options.tls.caFile} (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
      );
    }
  }
  return redisModule().createClient({
    url: options.url,
    name: options.clientName ?? REDIS_CONNECTION_DEFAULTS.clientName,
    disableOfflineQueue: true,
    commandOptions: { timeout: options.commandTimeoutMs ?? REDIS_CONNECTION_DEFAULTS.commandTimeoutMs },
    socket: {
      connectTimeout: options.connectTimeoutMs ?? REDIS_CONNECTION_DEFAULTS.connectTimeoutMs,
      reconnectStrategy: (retries: number) => delays[Math.min(retries, delays.length - 1)] ?? 2_000,
      ...(tlsEnabled
        ? {
            tls: true as const,
            ...(ca !== undefined ? { ca } : {}),
            ...(options.tls?.serverName !== undefined ? { servername: options.tls.serverName } : {}),
          }
        : {}),
    },
  }) as unknown as RedisClient;
}

/** Where a connection stands. */
interface ConnectionState {
  readonly client: RedisClient;
  readonly emitter: EventEmitter<RedisConnectionEvents>;
  readonly logger: AgentLogger;
  /** `redis redis://host:port/db`, without a password. */
  readonly description: string;
  up: boolean;
  downReason: string | undefined;
  started: boolean;
  closing: Promise<void> | undefined;
}

function markUp(state: ConnectionState): void {
  if (state.up) return;
  state.up = true;
  state.downReason = undefined;
  state.logger.info({ redis: state.description }, 'Redis connected');
  state.emitter.emit('up');
}

function markDown(state: ConnectionState, reason: string): void {
  if (state.closing !== undefined) return;
  const wasUp = state.up;
  state.up = false;
  state.downReason = reason;
  if (wasUp) {
    state.logger.warn({ redis: state.description, reason }, 'Redis connection lost; reconnecting');
    state.emitter.emit('down', reason);
  }
}

/** See {@link RedisConnection.whenUp}. */
function whenUp(state: ConnectionState, options: { timeoutMs?: number; signal?: AbortSignal }): Promise<void> {
  if (state.up) return Promise.resolve();
  const { emitter, description } = state;
  return new Promise<void>((resolve, reject) => {
    const finish = (error?: Error) => {
      clearTimeout(timer);
      emitter.off('up', onUp);
      options.signal?.removeEventListener('abort', onAbort);
      if (error) reject(error);
      else resolve();
    };
    const onUp = () => finish();
    const onAbort = () => finish(new RedisUnavailableError(`Redis: stopped waiting for ${description}`));
    const timer =
      options.timeoutMs === undefined
        ? undefined
        : setTimeout(
            () =>
              finish(
                new RedisUnavailableError(
                  `Redis: ${description} not reachable after ${options.timeoutMs} ms (${state.downReason ?? 'no answer'})`,
                ),
              ),
            options.timeoutMs,
          );
    timer?.unref();
    emitter.on('up', onUp);
    if (options.signal?.aborted) onAbort();
    else options.signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** A Lua script run by SHA on `client`, sent whole when Redis forgot it. */
function scriptOn(client: RedisClient, source: string): RedisScript {
  const sha = scriptSha(source);
  return {
    async run(keys, args) {
      const argv = [String(keys.length), ...keys, ...args.map(String)];
      try {
        return await client.sendCommand(['EVALSHA', sha, ...argv]);
      } catch (error) {
        if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
        return client.sendCommand(['EVAL', source, ...argv]);
      }
    },
  };
}

async function closeClient(state: ConnectionState): Promise<void> {
  if (!state.started) return;
  state.started = false;
  // A close asked for is not an outage: no "connection lost" warning, no `down` event.
  state.up = false;
  state.downReason = 'closed';
  try {
    if (state.client.isOpen) await state.client.close();
  } catch {
    state.client.destroy();
  }
  state.up = false;
  state.downReason = 'closed';
}

/** Connects to Redis as `options` say. Call `start()` to begin. */
export function createRedisConnection(options: RedisConnectionOptions): RedisConnection {
  const prefix = options.prefix ?? REDIS_CONNECTION_DEFAULTS.prefix;
  const state: ConnectionState = {
    client: createClientFor(options),
    emitter: new EventEmitter<RedisConnectionEvents>(),
    logger: options.logger ?? silentLogger,
    description: `redis ${describeRedisUrl(options.url)}`,
    up: false,
    downReason: 'not connected yet',
    started: false,
    closing: undefined,
  };
  const { client, emitter } = state;
  client.on('ready', () => markUp(state));
  // The client emits `error` for every failed attempt; without a listener Node would throw.
  client.on('error', (error: unknown) => markDown(state, redisErrorText(error)));
  client.on('end', () => markDown(state, 'connection closed'));
  client.on('reconnecting', () => markDown(state, state.downReason ?? 'reconnecting'));

  // defineProperties, not Object.assign: assign would copy the getters' values once.
  Object.defineProperties(emitter, {
    isUp: { get: () => state.up, enumerable: true },
    downReason: { get: () => state.downReason, enumerable: true },
  });
  const connection = Object.assign(emitter, {
    client,
    prefix,
    key: (...parts: string[]) => prefix + parts.join(':'),
    start() {
      if (state.started) return;
      state.started = true;
      const connect = () => void client.connect().catch((error: unknown) => markDown(state, redisErrorText(error)));
      // Started again while closing: connect once the close is done (the client connects again after a close).
      if (state.closing) {
        void state.closing.then(() => {
          if (state.started) connect();
        });
      } else connect();
    },
    whenUp: (waitOptions: { timeoutMs?: number; signal?: AbortSignal } = {}) => whenUp(state, waitOptions),
    script: (source: string): RedisScript => scriptOn(client, source),
    describe: () => state.description,
    close() {
      if (state.closing) return state.closing;
      const closing = closeClient(state).finally(() => {
        if (state.closing === closing) state.closing = undefined;
      });
      state.closing = closing;
      return closing;
    },
  });
  return connection as RedisConnection;
}

/** A Redis error as one line (the client's AggregateErrors carry their reasons inside). */
function redisErrorText(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return redisErrorText(error.errors[0]);
  if (error instanceof Error) return error.message || error.name;
  return String(error);
}
