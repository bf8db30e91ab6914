import { watch, type FSWatcher } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { silentLogger, type AgentLogger } from '../log/agent-logger.js';
import { watchChannel } from '../redis/channel.js';
import type { RedisConnection } from '../redis/connection.js';
import {
  entryLive,
  forgetIntegrationSecret,
  readSecretFile,
  recordIntegrationSecret,
  withIntegrationSecret,
  withoutIntegration,
  type SecretEntry,
  type SecretFileContent,
} from './secrets-file.js';
import { readRedisSecrets, redisSecretNames, updateRedisSecrets } from './secrets-redis.js';
import { timerDelay } from '../contract/timer-delay.js';
import { errorMessage } from '../errors.js';

export {
  DEFAULT_SECRET_GRACE_MS,
  readSecretFile,
  recordRotatedSecret,
  secretFilePath,
  type SecretEntry,
} from './secrets-file.js';

/**
 * The secrets a receiver accepts right now. Several at once: the config's, plus those of the
 * secret file (rotations, integrations), minus those whose grace period ended.
 */
export interface SecretSource {
  /** The secrets valid now. Cheap: called on every delivery. */
  current(): readonly string[];
  /**
   * Looks at the secret file again (a `stat`) and reloads it when it changed, and reads the Redis
   * secrets again (at most once a second); resolves true when the secrets changed. The receiver
   * calls it after a signature matched no secret, so a rotation is seen at its first delivery
   * even where file watching or the Redis channel did not tell.
   */
  refresh(): Promise<boolean>;
}

/** A {@link SecretSource} that also records integration secrets and watches its file. */
export interface WebhookSecrets extends SecretSource {
  /**
   * Loads the file (and the Redis secrets) once and starts watching them. Never rejects: a bad
   * file or an unreachable Redis is logged and the other secrets go on. After `close()` it loads
   * and watches again.
   */
  start(): Promise<void>;
  /** Stores an integration connection's secret durably (in Redis when given); it is accepted when this resolves. */
  addIntegration(connectionId: string, secret: string): Promise<void>;
  /** Forgets an integration connection's secret. */
  removeIntegration(connectionId: string): Promise<void>;
  /** Stops watching the file and the Redis channel; `start()` may follow. */
  close(): void;
}

/** Options of {@link createWebhookSecrets}. */
export interface WebhookSecretsOptions {
  /** The config's secrets (`webhooks.secrets`): always valid. */
  configured: readonly string[];
  /**
   * The secret file (`<state.directory>/webhook-secrets.json`). Default: none; integration secrets
   * are then kept in memory only (lost at a restart).
   */
  file?: string;
  /**
   * Redis, when several agents share `state.redis`: the secrets made while running (rotations,
   * integrations) are read from `webhooks:secrets` there, and integration secrets are stored
   * there, so every agent accepts them; changes arrive on `webhooks:secrets:changed`. The file's
   * secrets are still accepted (read only). Default: none.
   */
  redis?: RedisConnection;
  /** Epoch ms. Default `Date.now`. */
  now?: () => number;
  /** Default: silent. */
  logger?: AgentLogger;
  /** Watch the file with `fs.watch` (else it is only looked at on a failed verification). Default true. */
  watch?: boolean;
  /** Waits this long after a change is seen before reading, so a burst of events reads once. Default 50 ms. */
  debounceMs?: number;
}

/** Identity of the file as last read: a rename gives a new inode, an in-place edit a new mtime or size. */
interface FileStamp {
  ino: number;
  mtimeMs: number;
  size: number;
}

/** The Redis secrets are read again after a failed verification at most this often (a forger must not drive reads). */
const REDIS_REFRESH_MIN_MS = 1_000;

const sameStamp = (a: FileStamp | undefined, b: FileStamp | undefined) =>
  a === b || (a !== undefined && b !== undefined && a.ino === b.ino && a.mtimeMs === b.mtimeMs && a.size === b.size);

/**
 * The secrets accepted at `at` (pure): the config's, those of the file and of Redis whose grace
 * period has not ended, and the integration secrets kept in memory, each once; and the earliest
 * moment one of them expires (`Infinity`: none does).
 */
export function acceptedSecrets(
  configured: readonly string[],
  entries: readonly SecretEntry[],
  memory: Iterable<string>,
  at: number,
): { secrets: readonly string[]; nextExpiry: number } {
  const live = entries.filter((entry) => entryLive(entry, at));
  const nextExpiry = Math.min(Infinity, ...live.filter((e) => e.expiresAt !== undefined).map((e) => Date.parse(e.expiresAt!)));
  return { secrets: [...new Set([...configured, ...live.map((entry) => entry.secret), ...memory])], nextExpiry };
}

/**
 * Creates the secrets of a receiver: the config's, the secret file's re-read whenever it changes
 * (watched, debounced; also checked by `refresh()`), and with `redis` the shared ones there
 * (re-read when a change is announced), so a rotation reaches a running receiver without a
 * restart. Expired entries (a rotated-out secret after its grace period) drop out by themselves
 * at the next `current()`.
 */
export function createWebhookSecrets(options: WebhookSecretsOptions): WebhookSecrets {
  const configured = [...new Set(options.configured)];
  const w: SecretsState = {
    options,
    now: options.now ?? Date.now,
    logger: options.logger ?? silentLogger,
    configured,
    entries: [],
    redisEntries: [],
    memory: new Map(),
    stamp: undefined,
    cached: configured,
    nextExpiry: Infinity,
    watcher: undefined,
    debounce: undefined,
    refreshing: undefined,
    closed: false,
    starts: 0,
    stopWatchingRedis: undefined,
    redisReading: undefined,
    readRedisAgain: false,
    lastRedisRead: -Infinity,
    redisProblem: undefined,
  };
  return {
    current() {
      if (w.now() >= w.nextExpiry) rebuild(w);
      return w.cached;
    },
    refresh: () => refresh(w),
    start: () => start(w),
    addIntegration: (connectionId, secret) => addIntegration(w, connectionId, secret),
    removeIntegration: (connectionId) => removeIntegration(w, connectionId),
    close() {
      w.closed = true;
      w.stopWatchingRedis?.();
      w.stopWatchingRedis = undefined;
      clearTimeout(w.debounce);
      w.watcher?.close();
      w.watcher = undefined;
    },
  };
}

/** The state of one {@link WebhookSecrets}. */
interface SecretsState {
  readonly options: WebhookSecretsOptions;
  readonly now: () => number;
  readonly logger: AgentLogger;
  readonly configured: readonly string[];
  entries: SecretEntry[];
  redisEntries: SecretEntry[];
  /** Integration secrets without a file: memory only. */
  readonly memory: Map<string, string>;
  stamp: FileStamp | undefined;
  cached: readonly string[];
  /** The earliest `expiresAt` among the entries: past it, `cached` is rebuilt. */
  nextExpiry: number;
  watcher: FSWatcher | undefined;
  debounce: NodeJS.Timeout | undefined;
  refreshing: Promise<boolean> | undefined;
  closed: boolean;
  /** Counts the starts: a start overtaken by a close and a new start stops short. */
  starts: number;
  stopWatchingRedis: (() => void) | undefined;
  redisReading: Promise<boolean> | undefined;
  /** A change was announced while a read was in flight: that read may have missed it. */
  readRedisAgain: boolean;
  lastRedisRead: number;
  /** The last Redis problem logged, so an outage is logged once, not at every failed verification. */
  redisProblem: string | undefined;
}

function rebuild(w: SecretsState): void {
  const accepted = acceptedSecrets(w.configured, [...w.entries, ...w.redisEntries], w.memory.values(), w.now());
  w.nextExpiry = accepted.nextExpiry;
  w.cached = accepted.secrets;
}

/** Rebuilds after `update` and says whether the accepted secrets changed. */
function changes(w: SecretsState, update: () => void): boolean {
  const before = w.cached;
  update();
  rebuild(w);
  return before.length !== w.cached.length || before.some((secret, i) => secret !== w.cached[i]);
}

const adopt = (w: SecretsState, content: SecretFileContent | undefined) => changes(w, () => (w.entries = content?.secrets ?? []));
const adoptRedis = (w: SecretsState, content: SecretFileContent | undefined) => changes(w, () => (w.redisEntries = content?.secrets ?? []));

async function readRedis(w: SecretsState, connection: RedisConnection): Promise<boolean> {
  w.lastRedisRead = w.now();
  try {
    const changed = adoptRedis(w, await readRedisSecrets(connection));
    if (changed) w.logger.info({ redis: connection.describe(), secrets: w.cached.length }, 'webhook secrets reloaded from Redis');
    w.redisProblem = undefined;
    return changed;
  } catch (error) {
    const problem = errorMessage(error);
    if (problem !== w.redisProblem) {
      w.logger.warn({ err: problem }, 'cannot read the webhook secrets in Redis; keeping the secrets already loaded');
    }
    w.redisProblem = problem;
    return false;
  }
}

/** Reads the Redis secrets: at once when `announced` (a change or a reconnect), else at most once a second. */
function refreshRedis(w: SecretsState, announced: boolean): Promise<boolean> {
  const { redis } = w.options;
  if (redis === undefined || w.closed) return Promise.resolve(false);
  if (w.redisReading !== undefined) {
    if (announced) w.readRedisAgain = true;
    return w.redisReading;
  }
  if (!announced && w.now() - w.lastRedisRead < REDIS_REFRESH_MIN_MS) return Promise.resolve(false);
  w.readRedisAgain = false;
  w.redisReading = readRedis(w, redis).finally(() => {
    w.redisReading = undefined;
    if (w.readRedisAgain) void refreshRedis(w, true);
  });
  return w.redisReading;
}

async function statFile(path: string): Promise<FileStamp | undefined> {
  try {
    const s = await stat(path);
    return { ino: s.ino, mtimeMs: s.mtimeMs, size: s.size };
  } catch {
    return undefined;
  }
}

async function reload(w: SecretsState, force: boolean): Promise<boolean> {
  const { file } = w.options;
  if (file === undefined) return false;
  const seen = await statFile(file);
  if (!force && sameStamp(seen, w.stamp)) return false;
  try {
    const content = seen === undefined ? undefined : await readSecretFile(file);
    w.stamp = seen;
    const changed = adopt(w, content);
    if (changed) w.logger.info({ file, secrets: w.cached.length }, 'webhook secrets reloaded');
    return changed;
  } catch (error) {
    // A half-edited or broken file: keep the secrets we had, say why once per change.
    w.stamp = seen;
    const err = errorMessage(error);
    w.logger.warn({ err }, 'webhook secret file unreadable; keeping the secrets already loaded');
    return false;
  }
}

function refreshFile(w: SecretsState): Promise<boolean> {
  w.refreshing ??= reload(w, false).finally(() => (w.refreshing = undefined));
  return w.refreshing;
}

async function refresh(w: SecretsState): Promise<boolean> {
  const [fromFile, fromRedis] = await Promise.all([refreshFile(w), refreshRedis(w, false)]);
  return fromFile || fromRedis;
}

function startWatching(w: SecretsState, path: string): void {
  // One watcher, however many starts.
  w.watcher?.close();
  w.watcher = undefined;
  try {
    // The directory, not the file: a write replaces the file by a rename, which ends a file watch.
    w.watcher = watch(dirname(path), { persistent: false }, (_event, name) => {
      if (name !== null && name !== basename(path)) return;
      clearTimeout(w.debounce);
      w.debounce = setTimeout(() => void refreshFile(w), timerDelay(w.options.debounceMs ?? 50));
      w.debounce.unref();
    });
    w.watcher.on('error', (error) => {
      w.logger.debug({ err: error.message }, 'cannot watch the webhook secret file; it is read again after a failed verification');
      w.watcher?.close();
      w.watcher = undefined;
    });
  } catch (error) {
    // No directory yet, or no inotify: `refresh()` after a failed verification still sees changes.
    w.logger.debug({ err: errorMessage(error) }, 'not watching the webhook secret file');
  }
}

async function start(w: SecretsState): Promise<void> {
  const { file, redis } = w.options;
  // Open again after a close (a receiver started again); a close during this start wins.
  w.closed = false;
  const run = (w.starts += 1);
  const current = () => !w.closed && w.starts === run;
  if (redis !== undefined) {
    w.stopWatchingRedis ??= watchChannel(redis, redisSecretNames(redis).channel)(() => void refreshRedis(w, true));
    await refreshRedis(w, true);
  }
  if (file === undefined || !current()) return;
  await reload(w, true);
  if (w.options.watch !== false && current()) startWatching(w, file);
}

async function addIntegration(w: SecretsState, connectionId: string, secret: string): Promise<void> {
  const { file, redis } = w.options;
  const { now } = w;
  if (redis !== undefined) {
    adoptRedis(w, await updateRedisSecrets(redis, (content) => withIntegrationSecret(content, { connectionId, secret }, now()), now));
  }
  else if (file === undefined) w.memory.set(connectionId, secret);
  else adopt(w, await recordIntegrationSecret(file, { connectionId, secret }, now));
  // The stamp stays the old one: the next look reads the file again, with any other writer's change.
  rebuild(w);
}

async function removeIntegration(w: SecretsState, connectionId: string): Promise<void> {
  const { file, redis } = w.options;
  const { now } = w;
  if (redis !== undefined) {
    adoptRedis(w, await updateRedisSecrets(redis, (content) => withoutIntegration(content, connectionId), now));
    // Stored in the file before Redis was set up: forget it there too.
    if (file !== undefined && w.entries.some((entry) => entry.connectionId === connectionId)) {
      adopt(w, await forgetIntegrationSecret(file, connectionId, now));
    }
  } else if (file === undefined) w.memory.delete(connectionId);
  else adopt(w, await forgetIntegrationSecret(file, connectionId, now));
  rebuild(w);
}
