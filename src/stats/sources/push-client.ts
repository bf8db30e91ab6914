import type { Dispatcher } from 'undici';
import { NetworkError } from '../../api/errors.js';
import { redact, redactUrl } from '../../api/redact.js';
import { ListingAgentError, ValidationError } from '../../errors.js';
import { parsePushBody, type PushBody } from './push-reports.js';

/** Options of {@link pushShardCounts}. */
export interface PushShardCountsOptions {
  /** The push endpoint (`http://127.0.0.1:9466/stats`). */
  url: string;
  /** The shared key (`stats.push.key`), sent as `Authorization: Bearer <key>`. */
  key: string;
  /** One shard's report, several, or `{ shards: [server count per shard] }`. */
  reports: PushBody;
  /** The undici dispatcher. Default: undici's global dispatcher. */
  dispatcher?: Dispatcher;
  signal?: AbortSignal;
  /** Timeout for the answer. Default 10 000 ms. */
  timeoutMs?: number;
}

/**
 * The agent refused a push (401 wrong key, 400 bad body, 413 too large). `status` is the HTTP
 * status; the message carries the agent's `{error}`. Code `push_rejected`.
 */
export class PushRejectedError extends ListingAgentError {
  readonly status: number;

  constructor(status: number, message: string) {
    super('push_rejected', message);
    this.status = status;
  }
}

/**
 * Sends shard counts to a listing-agent push endpoint, for bots whose shards run in processes the
 * agent cannot see. The body is checked first with the agent's own rules, so a mistake throws a
 * `ValidationError` naming the field before anything is sent.
 *
 * @throws ValidationError for a body the agent would refuse; `PushRejectedError` when the agent
 * answers with an error; `NetworkError` when it cannot be reached. The key never appears in them.
 *
 * @example
 * ```ts
 * client.on('ready', () => setInterval(() => void pushShardCounts({
 *   url: 'http://127.0.0.1:9466/stats',
 *   key: process.env.PUSH_KEY!,
 *   reports: { shard_id: client.shard!.ids[0]!, shard_count: client.shard!.count, server_count: client.guilds.cache.size },
 * }).catch(console.warn), 60_000));
 * ```
 */
export async function pushShardCounts(options: PushShardCountsOptions): Promise<void> {
  const parsed = parsePushBody(options.reports, { plausible: true });
  if (!parsed.ok) throw new ValidationError('request', 'the push body', parsed.issues);
  const secrets = [options.key];
  const timeoutMs = options.timeoutMs ?? 10_000;
  const timeout = AbortSignal.timeout(timeoutMs);
  let status: number;
  let text: string;
  // undici loaded on first use, as the transport loads it.
  const { request } = await import('undici');
  try {
    const res = await request(options.url, {
      method: 'POST',
      headers: { authorization: `Bearer ${options.key}`, 'content-type': 'application/json' },
      body: JSON.stringify(options.reports),
      signal: options.signal ? AbortSignal.any([options.signal, timeout]) : timeout,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
    });
    status = res.statusCode;
    text = await res.body.text();
  } catch (error) {
    if (options.signal?.aborted) throw options.signal.reason;
    throw new NetworkError('POST', options.url, 1, error, secrets);
  }
  if (status >= 200 && status < 300) return;
  let said = '';
  try {
    const body = JSON.parse(text) as unknown;
    const error = typeof body === 'object' && body !== null ? (body as Record<string, unknown>).error : undefined;
    if (typeof error === 'string') said = `: ${redact(error, secrets)}`;
  } catch {
    // Not the agent's JSON (a proxy's page): the status says enough.
  }
  const hint = status === 401 ? ' Send the key set as stats.push.key on the agent.' : '';
  throw new PushRejectedError(status, `POST ${redactUrl(options.url, secrets)} failed with ${status}${said}.${hint}`);
}
