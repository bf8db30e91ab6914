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

export {
  DEFAULT_SECRET_GRACE_MS,
  readSecretFile,
  recordRotatedSecret,
  secretFilePath,
  WEBHOOK_SECRETS_FILE,
  type SecretEntry,
  type SecretFileContent,
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
   * file or an unreachable Redis is logged and the other secrets go on.
   */
  start(): Promise<void>;
  /** Stores an integration connection's secret durably (in Redis when given); it is accepted when this resolves. */
  addIntegration(connectionId: string, secret: string): Promise<void>;
  /** Forgets an integration connection's secret. */
  removeIntegration(connectionId: string): Promise<void>;
  /** Stops watching the file. */
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
 * Creates the secrets of a receiver: the config's, the secret file's re-read whenever it changes
 * (watched, debounced; also checked by `refresh()`), and with `redis` the shared ones there
 * (re-read when a change is announced), so a rotation reaches a running receiver without a
 * restart. Expired entries (a rotated-out secret after its grace period) drop out by themselves
 * at the next `current()`.
 */
export function createWebhookSecrets(options: WebhookSecretsOptions): WebhookSecrets {
  const now = options.now ?? Date.now;
  const logger = options.logger ?? silentLogger;
  const { file, redis } = options;
  const configured = [...new Set(options.configured)];
  let entries: SecretEntry[] = [];
  let redisEntries: SecretEntry[] = [];
  /** Integration secrets without a file: memory only. */
  const memory = new Map<string, string>();
  let stamp: FileStamp | undefined;
  let cached: readonly string[] = configured;
  /** The earliest `expiresAt` among the entries: past it, `cached` is rebuilt. */
  let nextExpiry = Infinity;
  let watcher: FSWatcher | undefined;
  let debounce: NodeJS.Timeout | undefined;
  let refreshing: Promise<boolean> | undefined;
  let closed = false;
  let stopWatchingRedis: (() => void) | undefined;
  let redisReading: Promise<boolean> | undefined;
  /** A change was announced while a read was in flight: that read may have missed it. */
  let readRedisAgain = false;
  let lastRedisRead = -Infinity;
  /** The last Redis problem logged, so an outage is logged once, not at every failed verification. */
  let redisProblem: string | undefined;

  function rebuild(): void {
    const at = now();
    const live = [...entries, ...redisEntries].filter((entry) => entryLive(entry, at));
    nextExpiry = Math.min(Infinity, ...live.filter((e) => e.expiresAt !== undefined).map((e) => Date.parse(e.expiresAt!)));
    cached = [...new Set([...configured, ...live.map((entry) => entry.secret), ...memory.values()])];
  }

  /** Rebuilds after `update` and says whether the accepted secrets changed. */
  function changes(update: () => void): boolean {
    const before = cached;
    update();
    rebuild();
    return before.length !== cached.length || before.some((secret, i) => secret !== cached[i]);
  }

  const adopt = (content: SecretFileContent | undefined) => changes(() => (entries = content?.secrets ?? []));
  const adoptRedis = (content: SecretFileContent | undefined) => changes(() => (redisEntries = content?.secrets ?? []));

  async function readRedis(connection: RedisConnection): Promise<boolean> {
    lastRedisRead = now();
    try {
      const changed = adoptRedis(await readRedisSecrets(connection));
      if (changed) logger.info({ redis: connection.describe(), secrets: cached.length }, 'webhook secrets reloaded from Redis');
      redisProblem = undefined;
      return changed;
    } catch (error) {
      const problem = error instanceof Error ? error.message : String(error);
      if (problem !== redisProblem) logger.warn({ err: problem }, 'cannot read the webhook secrets in Redis; keeping the secrets already loaded');
      redisProblem = problem;
      return false;
    }
  }

  /** Reads the Redis secrets: at once when `announced` (a change or a reconnect), else at most once a second. */
  function refreshRedis(announced: boolean): Promise<boolean> {
    if (redis === undefined || closed) return Promise.resolve(false);
    if (redisReading !== undefined) {
      if (announced) readRedisAgain = true;
      return redisReading;
    }
    if (!announced && now() - lastRedisRead < REDIS_REFRESH_MIN_MS) return Promise.resolve(false);
    readRedisAgain = false;
    redisReading = readRedis(redis).finally(() => {
      redisReading = undefined;
      if (readRedisAgain) void refreshRedis(true);
    });
    return redisReading;
  }

  async function statFile(path: string): Promise<FileStamp | undefined> {
    try {
      const s = await stat(path);
      return { ino: s.ino, mtimeMs: s.mtimeMs, size: s.size };
    } catch {
      return undefined;
    }
  }

  async function reload(force: boolean): Promise<boolean> {
    if (file === undefined) return false;
    const seen = await statFile(file);
    if (!force && sameStamp(seen, stamp)) return false;
    try {
      const content = seen === undefined ? undefined : await readSecretFile(file);
      stamp = seen;
      const changed = adopt(content);
      if (changed) logger.info({ file, secrets: cached.length }, 'webhook secrets reloaded');
      return changed;
    } catch (error) {
      // A half-edited or broken file: keep the secrets we had, say why once per change.
      stamp = seen;
      logger.warn({ err: error instanceof Error ? error.message : String(error) }, 'webhook secret file unreadable; keeping the secrets already loaded');
      return false;
    }
  }

  function refreshFile(): Promise<boolean> {
    refreshing ??= reload(false).finally(() => (refreshing = undefined));
    return refreshing;
  }

  async function refresh(): Promise<boolean> {
    const [fromFile, fromRedis] = await Promise.all([refreshFile(), refreshRedis(false)]);
    return fromFile || fromRedis;
  }

  function startWatching(path: string): void {
    try {
      // The directory, not the file: a write replaces the file by a rename, which ends a file watch.
      watcher = watch(dirname(path), { persistent: false }, (_event, name) => {
        if (name !== null && name !== basename(path)) return;
        clearTimeout(debounce);
        debounce = setTimeout(() => void refreshFile(), options.debounceMs ?? 50);
        debounce.unref();
      });
      watcher.on('error', (error) => {
        logger.debug({ err: error.message }, 'cannot watch the webhook secret file; it is read again after a failed verification');
        watcher?.close();
        watcher = undefined;
      });
    } catch (error) {
      // No directory yet, or no inotify: `refresh()` after a failed verification still sees changes.
      logger.debug({ err: error instanceof Error ? error.message : String(error) }, 'not watching the webhook secret file');
    }
  }

  return {
    current() {
      if (now() >= nextExpiry) rebuild();
      return cached;
    },
    refresh,
    async start() {
      if (closed) return;
      if (redis !== undefined) {
        stopWatchingRedis ??= watchChannel(redis, redisSecretNames(redis).channel)(() => void refreshRedis(true));
        await refreshRedis(true);
      }
      if (file === undefined || closed) return;
      await reload(true);
      if (options.watch !== false && !closed) startWatching(file);
    },
    async addIntegration(connectionId, secret) {
      if (redis !== undefined) adoptRedis(await updateRedisSecrets(redis, (content) => withIntegrationSecret(content, { connectionId, secret }, now()), now));
      else if (file === undefined) memory.set(connectionId, secret);
      else adopt(await recordIntegrationSecret(file, { connectionId, secret }, now));
      // The stamp stays the old one: the next look reads the file again, with any other writer's change.
      rebuild();
    },
    async removeIntegration(connectionId) {
      if (redis !== undefined) {
        adoptRedis(await updateRedisSecrets(redis, (content) => withoutIntegration(content, connectionId), now));
        // Stored in the file before Redis was set up: forget it there too.
        if (file !== undefined && entries.some((entry) => entry.connectionId === connectionId)) adopt(await forgetIntegrationSecret(file, connectionId, now));
      } else if (file === undefined) memory.delete(connectionId);
      else adopt(await forgetIntegrationSecret(file, connectionId, now));
      rebuild();
    },
    close() {
      closed = true;
      stopWatchingRedis?.();
      stopWatchingRedis = undefined;
      clearTimeout(debounce);
      watcher?.close();
      watcher = undefined;
    },
  };
}
