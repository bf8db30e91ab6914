import { watch, type FSWatcher } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { silentLogger, type AgentLogger } from '../agent/logger.js';
import {
  entryLive,
  forgetIntegrationSecret,
  readSecretFile,
  recordIntegrationSecret,
  type SecretEntry,
  type SecretFileContent,
} from './secrets-file.js';

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
   * Looks at the secret file again (a `stat`) and reloads it when it changed; resolves true when
   * the secrets changed. The receiver calls it after a signature matched no secret, so a rotation
   * is seen at its first delivery even where file watching does not work.
   */
  refresh(): Promise<boolean>;
}

/** A {@link SecretSource} that also records integration secrets and watches its file. */
export interface WebhookSecrets extends SecretSource {
  /** Loads the file once and starts watching it. Never rejects: a bad file is logged and the config's secrets go on. */
  start(): Promise<void>;
  /** Stores an integration connection's secret durably; it is accepted when this resolves. */
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

const sameStamp = (a: FileStamp | undefined, b: FileStamp | undefined) =>
  a === b || (a !== undefined && b !== undefined && a.ino === b.ino && a.mtimeMs === b.mtimeMs && a.size === b.size);

/**
 * Creates the secrets of a receiver: the config's, and the secret file's re-read whenever it
 * changes (watched, debounced; also checked by `refresh()`), so a rotation reaches a running
 * receiver without a restart. Expired entries (a rotated-out secret after its grace period) drop
 * out by themselves at the next `current()`.
 */
export function createWebhookSecrets(options: WebhookSecretsOptions): WebhookSecrets {
  const now = options.now ?? Date.now;
  const logger = options.logger ?? silentLogger;
  const { file } = options;
  const configured = [...new Set(options.configured)];
  let entries: SecretEntry[] = [];
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

  function rebuild(): void {
    const at = now();
    const live = entries.filter((entry) => entryLive(entry, at));
    nextExpiry = Math.min(Infinity, ...live.filter((e) => e.expiresAt !== undefined).map((e) => Date.parse(e.expiresAt!)));
    cached = [...new Set([...configured, ...live.map((entry) => entry.secret), ...memory.values()])];
  }

  function adopt(content: SecretFileContent | undefined): boolean {
    const before = cached;
    entries = content?.secrets ?? [];
    rebuild();
    return before.length !== cached.length || before.some((secret, i) => secret !== cached[i]);
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

  function refresh(): Promise<boolean> {
    refreshing ??= reload(false).finally(() => (refreshing = undefined));
    return refreshing;
  }

  function startWatching(path: string): void {
    try {
      // The directory, not the file: a write replaces the file by a rename, which ends a file watch.
      watcher = watch(dirname(path), { persistent: false }, (_event, name) => {
        if (name !== null && name !== basename(path)) return;
        clearTimeout(debounce);
        debounce = setTimeout(() => void refresh(), options.debounceMs ?? 50);
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
      if (file === undefined || closed) return;
      await reload(true);
      if (options.watch !== false && !closed) startWatching(file);
    },
    async addIntegration(connectionId, secret) {
      if (file === undefined) memory.set(connectionId, secret);
      else adopt(await recordIntegrationSecret(file, { connectionId, secret }, now));
      // The stamp stays the old one: the next look reads the file again, with any other writer's change.
      rebuild();
    },
    async removeIntegration(connectionId) {
      if (file === undefined) memory.delete(connectionId);
      else adopt(await forgetIntegrationSecret(file, connectionId, now));
      rebuild();
    },
    close() {
      closed = true;
      clearTimeout(debounce);
      watcher?.close();
      watcher = undefined;
    },
  };
}
