import { resolve } from 'node:path';
import { createListingClient, type ListingClient } from '../api/client.js';
import { urlCredentialForms } from '../api/redact.js';
import type { ConfigSources } from '../config/loader.js';
import { secretValues } from '../config/mask.js';
import type { ListingAgentConfig } from '../config/schema.js';
import { ListingAgentError } from '../errors.js';
import { RedisServerError, RedisUnavailableError, type RedisConnection } from '../redis/connection.js';
import { describeServer, type RedisServer } from '../redis/server.js';
import { redisConnectionFor } from '../redis/from-config.js';
import type { LockOwner } from '../store/lock.js';
import { createRedisStore } from '../store/redis.js';
import { createStateFileReader } from '../store/state-file-reader.js';
import { probeService, type ServiceAnswer } from './service-probe.js';
import { DOCTOR_DEFAULTS, type DoctorDeps } from './types.js';

/** Options of {@link createDoctorDeps}. */
export interface CreateDoctorDepsOptions {
  config: ListingAgentConfig;
  sources: ConfigSources;
  cwd: string;
  /** Per check. Default {@link DOCTOR_DEFAULTS.checkTimeoutMs}. */
  timeoutMs?: number;
  /** `--probe`. Default false. */
  probe?: boolean;
  owner?: LockOwner;
  isProcessAlive?: (pid: number) => boolean;
  /** Epoch ms. Default `Date.now`. */
  now?: () => number;
}

/** {@link DoctorDeps} with what it opened, to close once the checks are done. */
export interface OwnedDoctorDeps extends DoctorDeps {
  /** Closes the API client and the Redis connection. Never rejects. */
  close(): Promise<void>;
}

/** The state directory as the agent resolves it. */
export function doctorStateDirectory(deps: Pick<DoctorDeps, 'config' | 'cwd'>): string {
  return resolve(deps.cwd, deps.config.state.directory);
}

/**
 * The parts of a Redis URL that are secret: its password (and `user:password`), not its host,
 * which every message names. Empty for a URL without credentials; a value that is not a URL stays
 * secret whole.
 */
export function redisUrlSecrets(url: string): string[] {
  return URL.canParse(url) ? urlCredentialForms(url) : [url];
}

/** `values` with the Redis URL (when among them) replaced by its secret parts. */
export function scrubbableSecrets(values: readonly string[], redisUrl: string | undefined): string[] {
  if (redisUrl === undefined) return [...values];
  return [...values.filter((value) => value !== redisUrl), ...redisUrlSecrets(redisUrl)];
}

/** Shares one promise among the checks that need it (`service()`, `redis()`). */
function once<T>(make: () => Promise<T>): () => Promise<T> {
  let value: Promise<T> | undefined;
  return () => (value ??= make());
}

/** The Redis connection `state.redis` names, started; up within `timeoutMs` or a one-line error. */
async function connectRedis(config: ListingAgentConfig, timeoutMs: number, made: (c: RedisConnection) => void): Promise<RedisConnection> {
  const redis = config.state.redis;
  if (redis === undefined) throw new ListingAgentError('invalid_option', 'no state.redis in the configuration');
  const connection = redisConnectionFor(redis, {
    clientName: 'listing-agent-doctor',
    connectTimeoutMs: timeoutMs,
    commandTimeoutMs: timeoutMs,
  });
  made(connection);
  connection.start();
  try {
    await connection.whenUp({ timeoutMs });
  } catch (error) {
    if (error instanceof RedisServerError) throw error;
    const server = connection.server;
    if (server !== undefined && server.role !== 'primary') throw onReplica(connection.describe(), server, redis.url === undefined);
    throw new RedisUnavailableError(
      `cannot reach ${connection.describe()} within ${timeoutMs} ms: ${connection.downReason ?? 'no answer'}`,
      { cause: error },
    );
  }
  return connection;
}

/** What the doctor says of a connection that reached a replica: the agent would not be ready there. */
function onReplica(where: string, server: RedisServer, followed: boolean): RedisServerError {
  const problem = `${where} reaches ${describeServer(server)}: the agent is not ready there, and leads nothing`;
  const fix = followed
    ? 'a failover is under way: wait for it to end; if it lasts, ask the Sentinels (SENTINEL MASTERS) or the cluster (CLUSTER SHARDS)'
    : 'point state.redis.url (LISTING_AGENT_STATE_REDIS_URL) at the primary, or at an endpoint that follows it, or set ' +
      'state.redis.sentinel';
  return new RedisServerError(problem, fix);
}

/**
 * The real dependencies of the checks for `config`: the service asked once, a client without
 * retries, Redis connected on first use (with the check timeout), the state read without a lock.
 * Every config secret is already in `secrets`.
 */
export function createDoctorDeps(options: CreateDoctorDepsOptions): OwnedDoctorDeps {
  const { config } = options;
  const now = options.now ?? Date.now;
  // Each wait gets 80% of the check's time: it runs out first, and says what it waited for.
  const timeoutMs = Math.max(1, Math.floor((options.timeoutMs ?? DOCTOR_DEFAULTS.checkTimeoutMs) * 0.8));
  let client: ListingClient | undefined;
  let connection: RedisConnection | undefined;
  const redis = once(() => connectRedis(config, timeoutMs, (made) => (connection = made)));
  const service = once<ServiceAnswer>(() => probeService({ v1BaseUrl: config.service.v1, token: config.service.token, timeoutMs, now }));

  return {
    config,
    sources: options.sources,
    cwd: options.cwd,
    now,
    timeoutMs,
    probe: options.probe ?? false,
    ...(options.owner ? { owner: options.owner } : {}),
    ...(options.isProcessAlive ? { isProcessAlive: options.isProcessAlive } : {}),
    secrets: new Set(scrubbableSecrets(secretValues(config), config.state.redis?.url)),
    service,
    client() {
      client ??= createListingClient({
        projectToken: config.service.token,
        v1BaseUrl: config.service.v1,
        v0BaseUrl: config.service.v0,
        timeoutMs,
        // The doctor reports what the service answers now; a retry would only hide it (and wait).
        retry: { maxAttempts: 1 },
      });
      return client;
    },
    redis,
    async stateReader() {
      if (config.state.redis === undefined) return createStateFileReader(doctorStateDirectory(options));
      // The Redis store reads without open(), and writes nothing.
      return createRedisStore({ connection: await redis() });
    },
    async close() {
      await client?.close().catch(() => undefined);
      await connection?.close().catch(() => undefined);
    },
  };
}
