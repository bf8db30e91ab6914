import { mkdir, open, readFile, stat, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { ListingAgentError } from '../errors.js';
import { writeJsonAtomically } from '../fs/atomic-json.js';
import { errnoCode, fsReason } from '../store/errors.js';

/**
 * The webhook secret file, `<state.directory>/webhook-secrets.json`: the secrets that are not in
 * the config because they were made while the agent ran (a rotation from the CLI, an integration
 * handshake). It is read by the receiver (re-read when it changes) and written by the receiver and
 * by `listing-agent webhooks rotate`, possibly at once: every write takes a lock file beside it,
 * reads the file again, changes it, and replaces it atomically (temporary file, fsync, rename),
 * mode 0600 since it holds live secrets.
 */

/** The file's name in the state directory. */
const WEBHOOK_SECRETS_FILE = 'webhook-secrets.json';

/**
 * How long a rotated-out secret stays valid: deliveries signed before the rotation are still
 * retried for ~7 s; a clock skew or a slow queue gets the rest.
 */
export const DEFAULT_SECRET_GRACE_MS = 10 * 60_000;

const entrySchema = z.object({
  secret: z.string().min(1),
  /** `rotate`: made by `webhooks rotate`; `integration`: from an `integration.create` handshake. */
  source: z.enum(['rotate', 'integration']),
  /** The webhook it signs (rotations). */
  webhookId: z.string().optional(),
  /** The integration connection it signs (handshakes). */
  connectionId: z.string().optional(),
  /** ISO 8601. */
  addedAt: z.string(),
  /** ISO 8601: after this the secret is no longer accepted (a rotated-out secret's grace end). */
  expiresAt: z.string().optional(),
});

export const fileSchema = z.object({ version: z.literal(1), secrets: z.array(entrySchema) });

/** One secret of the file. */
export type SecretEntry = z.infer<typeof entrySchema>;

/** The file's content. */
export type SecretFileContent = z.infer<typeof fileSchema>;

const FILE_MODE = 0o600;
const LOCK_WAIT_MS = 5_000;
/** A lock older than this was left by a process that died mid-write (a write takes milliseconds). */
const LOCK_STALE_MS = 30_000;

/** The path of the secret file of a state directory. */
export function secretFilePath(stateDirectory: string): string {
  return join(stateDirectory, WEBHOOK_SECRETS_FILE);
}

/** True while the entry is accepted at `now` (epoch ms). */
export function entryLive(entry: SecretEntry, now: number): boolean {
  return entry.expiresAt === undefined || Date.parse(entry.expiresAt) > now;
}

/**
 * Reads the file: `undefined` when it does not exist. Throws a `ListingAgentError` naming the file
 * (never a secret) when it cannot be read or is not a secret file.
 */
export async function readSecretFile(path: string): Promise<SecretFileContent | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return undefined;
    throw new ListingAgentError('webhook_secrets', `cannot read the webhook secret file ${path}: ${fsReason(error)}`, { cause: error });
  }
  return parseSecretContent(text, `the webhook secret file ${path}`);
}

/**
 * Parses the secrets' JSON (the file's, or the Redis key's: the same shape). Throws a
 * `ListingAgentError` naming `where` and the fields at fault, never a secret.
 */
export function parseSecretContent(text: string, where: string): SecretFileContent {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ListingAgentError('webhook_secrets', `${where} is not JSON: fix or delete it (the secrets in the config still work)`);
  }
  const parsed = fileSchema.safeParse(json);
  // Issues name fields only: the message never repeats a secret.
  if (!parsed.success) {
    const fields = parsed.error.issues.map((issue) => issue.path.join('.') || '(root)').join(', ');
    throw new ListingAgentError('webhook_secrets', `${where} does not hold webhook secrets (problems at ${fields}): fix or delete it`);
  }
  return parsed.data;
}

/** The content with the entries expired at `at` (epoch ms) dropped: what every change starts from. */
export function liveContent(content: SecretFileContent | undefined, at: number): SecretFileContent {
  return { version: 1, secrets: (content?.secrets ?? []).filter((entry) => entryLive(entry, at)) };
}

/**
 * A rotation recorded: the new secret added, and the webhook's earlier rotated secrets given
 * `graceMs` more (deliveries signed before the rotation may still be retried), after which they drop.
 */
export function withRotatedSecret(
  content: SecretFileContent,
  input: { webhookId: string; secret: string; graceMs?: number },
  at: number,
): SecretFileContent {
  const retireAt = new Date(at + (input.graceMs ?? DEFAULT_SECRET_GRACE_MS)).toISOString();
  const secrets = content.secrets
    .filter((entry) => entry.secret !== input.secret)
    .map((entry) => {
      const retires = entry.source === 'rotate' && entry.webhookId === input.webhookId && entry.expiresAt === undefined;
      return retires ? { ...entry, expiresAt: retireAt } : entry;
    });
  secrets.push({ secret: input.secret, source: 'rotate', webhookId: input.webhookId, addedAt: new Date(at).toISOString() });
  return { version: 1, secrets };
}

/** An integration connection's secret recorded, replacing an earlier one of the same connection. */
export function withIntegrationSecret(
  content: SecretFileContent,
  input: { connectionId: string; secret: string },
  at: number,
): SecretFileContent {
  return {
    version: 1,
    secrets: [
      ...content.secrets.filter((entry) => entry.connectionId !== input.connectionId && entry.secret !== input.secret),
      { secret: input.secret, source: 'integration', connectionId: input.connectionId, addedAt: new Date(at).toISOString() },
    ],
  };
}

/** An integration connection's secret forgotten (it was disconnected). */
export function withoutIntegration(content: SecretFileContent, connectionId: string): SecretFileContent {
  return { version: 1, secrets: content.secrets.filter((entry) => entry.connectionId !== connectionId) };
}

function writeAtomically(path: string, content: SecretFileContent): Promise<void> {
  return writeJsonAtomically(path, content, FILE_MODE);
}

async function takeLock(lockPath: string, now: () => number): Promise<() => Promise<void>> {
  const deadline = now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      const handle = await open(lockPath, 'wx', FILE_MODE);
      await handle.close();
      return () => unlink(lockPath).catch(() => undefined);
    } catch (error) {
      if (errnoCode(error) !== 'EEXIST') throw error;
    }
    const age = await stat(lockPath).then((s) => Date.now() - s.mtimeMs, () => 0);
    if (age > LOCK_STALE_MS) {
      await unlink(lockPath).catch(() => undefined);
      continue;
    }
    if (now() > deadline) {
      const message =
        `the webhook secret file is locked by another writer (${lockPath}); ` + 'if no listing-agent is writing it, delete the lock file';
      throw new ListingAgentError('webhook_secrets', message);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Writers in this process go one after the other (the lock file orders them against other processes). */
const queues = new Map<string, Promise<unknown>>();

/**
 * Changes the secret file under its lock: `change` gets the current content (empty when there is
 * none) with the expired entries already dropped, and returns the new one. Resolves once the new
 * file is on disk. Creates the state directory when missing.
 */
function updateSecretFile(
  path: string,
  change: (content: SecretFileContent) => SecretFileContent,
  now: () => number = Date.now,
): Promise<SecretFileContent> {
  const run = async () => {
    try {
      await mkdir(dirname(path), { recursive: true, mode: 0o700 });
      const release = await takeLock(`${path}.lock`, now);
      try {
        const next = change(liveContent(await readSecretFile(path), now()));
        await writeAtomically(path, next);
        return next;
      } finally {
        await release();
      }
    } catch (error) {
      if (error instanceof ListingAgentError) throw error;
      throw new ListingAgentError('webhook_secrets', `cannot write the webhook secret file ${path}: ${fsReason(error)}`, { cause: error });
    }
  };
  const previous = queues.get(path) ?? Promise.resolve();
  const next = previous.then(run, run);
  const settled = next.catch(() => undefined);
  queues.set(path, settled);
  void settled.then(() => {
    if (queues.get(path) === settled) queues.delete(path);
  });
  return next;
}

/** Records a rotated webhook secret in the file (see {@link withRotatedSecret}). */
export function recordRotatedSecret(
  path: string,
  input: { webhookId: string; secret: string; graceMs?: number },
  now: () => number = Date.now,
): Promise<SecretFileContent> {
  return updateSecretFile(path, (content) => withRotatedSecret(content, input, now()), now);
}

/** Records the secret of an integration connection in the file (replacing an earlier one of the same connection). */
export function recordIntegrationSecret(
  path: string,
  input: { connectionId: string; secret: string },
  now: () => number = Date.now,
): Promise<SecretFileContent> {
  return updateSecretFile(path, (content) => withIntegrationSecret(content, input, now()), now);
}

/** Forgets the secret of an integration connection in the file at once (it was disconnected). */
export function forgetIntegrationSecret(path: string, connectionId: string, now: () => number = Date.now): Promise<SecretFileContent> {
  return updateSecretFile(path, (content) => withoutIntegration(content, connectionId), now);
}
