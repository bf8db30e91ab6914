import type { Dispatcher } from 'undici';
import { CLIENT_VERSION } from '../api/version.js';
import { causeMessage } from '../errors.js';
import type { RestHeaders } from './rate-limit.js';
import type { AgentMode } from '../config/setting-names.js';

/** How every Discord REST source of the agent connects: the bot token and the transport. */
export interface DiscordConnectionOptions {
  /** The bot token (`discord.token`), sent as `Authorization: Bot <token>`. A leading `Bot ` is accepted. */
  token: string;
  /** Discord's API base, without version. Default `https://discord.com/api`. */
  apiBaseUrl?: string;
  /** The API version in the path (`/v10/`). Default 10. */
  apiVersion?: number;
  /** The undici dispatcher. Default: undici's global dispatcher. */
  dispatcher?: Dispatcher;
  /** The clock (epoch ms), for caches and rate-limit deadlines. Default `Date.now`. */
  now?: () => number;
  /** `User-Agent`. Default `DiscordBot (https://www.npmjs.com/package/listing-agent, <version>)`, the form Discord asks for. */
  userAgent?: string;
  /** Per-request timeout for the answer's headers and body. Default 15 000 ms. */
  timeoutMs?: number;
  /**
   * Whose words a refusal is in: `embedded` names `discord.token` alone, the daemon's voice (the
   * default) its variable too (config/setting-names.ts).
   */
  mode?: AgentMode;
}

/** The defaults of {@link DiscordConnectionOptions}. */
export const DISCORD_CONNECTION_DEFAULTS = {
  apiBaseUrl: 'https://discord.com/api',
  apiVersion: 10,
  userAgent: `DiscordBot (https://www.npmjs.com/package/listing-agent, ${CLIENT_VERSION})`,
  timeoutMs: 15_000,
} as const satisfies Partial<DiscordConnectionOptions>;

/*
 * The small pieces of a call to Discord's REST API: reading a bounded body, reading Discord's error
 * message, and one GET that answers instead of throwing. Rate limits are read in `rate-limit.ts`;
 * `client.ts` puts both together for the sources (the count source, the commands source).
 */

/** An answer larger than this is not Discord's (a wrong base URL): it is not read to the end. */
const MAX_BODY_BYTES = 1024 * 1024;

/** Reads an answer's body as text, or undefined when it is larger than {@link MAX_BODY_BYTES}. */
async function readBody(body: Dispatcher.ResponseData['body']): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) {
      body.destroy();
      return undefined;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The JSON value of a body, or undefined when it is empty or not JSON. */
function parseJson(text: string | undefined): unknown {
  if (text === undefined || text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** Discord's `{ message }` of an error answer, short and on one line (`: 401: Unauthorized`), or ''. */
export function discordMessage(body: unknown): string {
  const message = typeof body === 'object' && body !== null ? (body as Record<string, unknown>).message : undefined;
  return typeof message === 'string' && message !== '' ? `: ${message.replace(/\s+/g, ' ').slice(0, 200)}` : '';
}

/** A bot token as `Authorization: Bot <token>` wants it: trimmed, a leading `Bot ` accepted and removed. */
export function botToken(raw: string): string {
  return raw.trim().replace(/^Bot\s+/i, '');
}

/** What {@link discordGet} got: an answer (any status), or why there is none. */
export type DiscordAnswer =
  | { ok: true; status: number; headers: RestHeaders; body: unknown }
  | { ok: false; reason: string };

/** Options of {@link discordGet}. */
export interface DiscordGetOptions {
  headers: Record<string, string>;
  /** The undici dispatcher. Default: undici's global dispatcher. */
  dispatcher?: Dispatcher | undefined;
  /** Timeout for the answer's headers and body, in ms. */
  timeoutMs: number;
  /** The caller's signal: aborting it ends the request with the reason `the request was aborted`. */
  signal?: AbortSignal | undefined;
  /** How the reasons name the request (`GET /applications/@me`); the URL itself is not repeated. */
  route: string;
  /** How the reasons name the timeout (`15 s`). */
  timeoutText: string;
}

/**
 * One GET to Discord that never throws: the status, headers and JSON body (undefined when the body
 * is empty, not JSON, or larger than {@link MAX_BODY_BYTES}), or a reason for a network failure, a
 * timeout or an abort. Status handling and rate limits are the caller's.
 */
export async function discordGet(url: string, options: DiscordGetOptions): Promise<DiscordAnswer> {
  const timeout = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  // undici loaded on first use, as the transport loads it.
  const { request } = await import('undici');
  try {
    const res = await request(url, {
      method: 'GET',
      headers: options.headers,
      ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
      signal,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
    });
    const text = await readBody(res.body);
    return { ok: true, status: res.statusCode, headers: res.headers, body: parseJson(text) };
  } catch (error) {
    if (options.signal?.aborted) return { ok: false, reason: `the request to ${options.route} was aborted` };
    const timedOut =
      timeout.aborted ||
      (error instanceof Error && (error.name === 'TimeoutError' || /TIMEOUT/.test((error as NodeJS.ErrnoException).code ?? '')));
    if (timedOut) return { ok: false, reason: `Discord did not answer ${options.route} within ${options.timeoutText}` };
    return { ok: false, reason: `cannot reach Discord for ${options.route} (${url}): ${causeMessage(error)}` };
  }
}
