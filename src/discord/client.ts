import { redact } from '../api/redact.js';
import { formatDuration } from '../config/duration.js';
import { createRateLimitBook, readRateLimit } from './rate-limit.js';
import { botToken, DISCORD_CONNECTION_DEFAULTS, discordGet, discordMessage, type DiscordConnectionOptions } from './rest.js';
import { settingName, type AgentMode } from '../config/setting-names.js';

/*
 * The one way the agent's Discord REST sources (the count source, the commands source) ask
 * Discord something: a GET with the bot token, Discord's rate limits obeyed per bucket without
 * sleeping, and every answer that is not a 2xx turned into a reason that says what to fix. Why
 * this is ours and not `@discordjs/rest`: docs/decisions/less-by-hand.md.
 */

/** What {@link DiscordRestClient.get} got: the JSON body of a 2xx answer, or why there is none. */
type DiscordStep =
  | { ok: true; body: unknown }
  /** `status` is set when Discord answered (a 401, a 404, a 5xx...), with the answer's body. */
  | { ok: false; reason: string; status?: number; body?: unknown };

/** A Discord REST client for one bot token. */
export interface DiscordRestClient {
  /**
   * One GET of `path` (`/applications/@me`, below `/v10`), named `route` in reasons and in the
   * rate-limit book (`GET /applications/{id}/commands`: one bucket whatever the ID).
   *
   * - While the route's bucket (or every route, after a global 429) must wait, no request goes out:
   *   the answer is at once a reason saying how long is left.
   * - 401 and 403 say to check `discord.token`; a 429 says how long no request goes out; any other
   *   status names itself with Discord's message.
   * - Never throws; the token never appears in a reason.
   */
  get(route: string, path: string, signal?: AbortSignal): Promise<DiscordStep>;
  /** The token in the forms a reason could carry it, for callers that build reasons of their own. */
  readonly secrets: readonly string[];
}

/** A whole second at least, rounded up: `no request for another 59s`. */
function secondsLeft(ms: number): string {
  return formatDuration(Math.max(1_000, Math.ceil(ms / 1_000) * 1_000));
}

/**
 * Creates a {@link DiscordRestClient}. The caller has checked the token is not empty (its error
 * names the source that needs it).
 */
export function createDiscordRestClient(options: DiscordConnectionOptions): DiscordRestClient {
  const token = botToken(options.token);
  const timeoutMs = options.timeoutMs ?? DISCORD_CONNECTION_DEFAULTS.timeoutMs;
  const apiBaseUrl = (options.apiBaseUrl ?? DISCORD_CONNECTION_DEFAULTS.apiBaseUrl).replace(/\/+$/, '');
  const base = `${apiBaseUrl}/v${options.apiVersion ?? DISCORD_CONNECTION_DEFAULTS.apiVersion}`;
  const now = options.now ?? Date.now;
  const headers = {
    authorization: `Bot ${token}`,
    'user-agent': options.userAgent ?? DISCORD_CONNECTION_DEFAULTS.userAgent,
    accept: 'application/json',
  };
  const secrets = [token, options.token];
  const book = createRateLimitBook();

  async function get(route: string, path: string, signal?: AbortSignal): Promise<DiscordStep> {
    const block = book.blocked(route);
    const before = now();
    if (before < block.until) {
      return {
        ok: false,
        reason: `rate limited by Discord ` +
          `(${block.note ?? 'limit reached'}): no request to ${route} for another ${secondsLeft(block.until - before)}`,
      };
    }
    const answer = await discordGet(`${base}${path}`, {
      headers,
      dispatcher: options.dispatcher,
      timeoutMs,
      signal,
      route,
      timeoutText: formatDuration(timeoutMs),
    });
    if (!answer.ok) return answer;
    const { status, body } = answer;
    const limit = readRateLimit(status, answer.headers, body);
    const note = status === 429
      ? `${route} answered 429${limit.scope ? ` with scope ${limit.scope}` : ''}${limit.global ? ' (global)' : ''}`
      : `X-RateLimit-Remaining reached 0 on ${route}`;
    book.record(route, limit, now(), note);
    if (status >= 200 && status < 300) return { ok: true, body };
    return { ok: false, status, body, reason: refusal(status, route, body, note, limit.waitMs, options.mode) };
  }

  return {
    secrets,
    async get(route, path, signal) {
      const step = await get(route, path, signal);
      // One place scrubs every reason: no path can carry the token out.
      return step.ok ? step : { ...step, reason: redact(step.reason, secrets) };
    },
  };
}

/** The reason for an answer that is not a 2xx. */
function refusal(status: number, route: string, body: unknown, note: string, waitMs: number, mode: AgentMode | undefined): string {
  if (status === 401 || status === 403) {
    const setting = settingName('discord.token', mode);
    return `Discord refused the bot token ` +
      `(${status} on ${route}${discordMessage(body)}): check ${setting} is the token of this bot, from the Bot page of the Discord ` +
      `Developer Portal`;
  }
  if (status === 429) return `rate limited by Discord (${note}): no request for ${formatDuration(waitMs)}`;
  return `Discord answered ${status} to ${route}${discordMessage(body)}`;
}
