import { redact } from '../../api/redact.js';
import { formatDuration } from '../../config/duration.js';
import { createRateLimitBook, readRateLimit } from '../../discord/rate-limit.js';
import { botToken, DISCORD_CONNECTION_DEFAULTS, discordGet, discordMessage, errorText, type DiscordConnectionOptions } from '../../discord/rest.js';
import { ListingAgentError } from '../../errors.js';
import type { CommandLoad, CommandSource } from '../types.js';

/** Options of {@link createDiscordCommandsSource}. */
export interface DiscordCommandsSourceOptions extends DiscordConnectionOptions {
  /** The bot's application ID (a snowflake). Default: the `id` of `GET /applications/@me`, asked once. */
  applicationId?: string;
}

/** The defaults of {@link DiscordCommandsSourceOptions}. */
export const DISCORD_COMMANDS_SOURCE_DEFAULTS = DISCORD_CONNECTION_DEFAULTS;

const APPLICATION = 'GET /applications/@me';
/** The rate-limit book's key for the commands route: one bucket whatever the ID. */
const COMMANDS = 'GET /applications/{id}/commands';

type Step<T> = { ok: true; value: T } | { ok: false; reason: string };

/**
 * The bot's registered global commands from Discord's REST API, for a sidecar without a gateway
 * connection: `GET /v10/applications/{id}/commands?with_localizations=true` (full localization
 * maps rather than one locale's text), with `Authorization: Bot <token>`.
 *
 * - The application ID comes from `applicationId`, else from `GET /applications/@me` once (an
 *   application's ID never changes).
 * - Discord's rate-limit headers are obeyed per bucket (`src/discord/rate-limit.ts`): when
 *   `X-RateLimit-Remaining` reached 0, or after a 429, no request goes out before the wait is over.
 *   Nothing sleeps: until then `load()` answers `{ ok: false }` saying how long is left, and the
 *   sync tries again at its next run (a sleeping load would hold up the agent's start).
 * - A 401 or 403 answers "check discord.token"; a 404 with a configured `applicationId` says to
 *   check it. The token never appears in a reason; `load()` never throws.
 *
 * @throws ListingAgentError (code `invalid_option`) when the token is empty or `applicationId` is not a snowflake.
 */
export function createDiscordCommandsSource(options: DiscordCommandsSourceOptions): CommandSource {
  const token = botToken(options.token);
  if (token === '') throw new ListingAgentError('invalid_option', 'the Discord commands source needs the bot token: set discord.token');
  const configuredId = options.applicationId?.trim();
  if (configuredId !== undefined && !/^\d{15,21}$/.test(configuredId)) {
    throw new ListingAgentError('invalid_option', `applicationId must be a Discord snowflake (15 to 21 digits), not ${JSON.stringify(configuredId)}`);
  }
  const timeoutMs = options.timeoutMs ?? DISCORD_COMMANDS_SOURCE_DEFAULTS.timeoutMs;
  const base = `${(options.apiBaseUrl ?? DISCORD_COMMANDS_SOURCE_DEFAULTS.apiBaseUrl).replace(/\/+$/, '')}/v${options.apiVersion ?? DISCORD_COMMANDS_SOURCE_DEFAULTS.apiVersion}`;
  const now = options.now ?? Date.now;
  const headers = {
    authorization: `Bot ${token}`,
    'user-agent': options.userAgent ?? DISCORD_COMMANDS_SOURCE_DEFAULTS.userAgent,
    accept: 'application/json',
  };
  const secrets = [token, options.token];
  const book = createRateLimitBook();
  let applicationId = configuredId;

  /** One GET with the rate limits obeyed; the JSON body of a 2xx answer, or why not. */
  async function get(route: string, path: string, signal: AbortSignal | undefined): Promise<Step<unknown>> {
    const block = book.blocked(route);
    const before = now();
    if (before < block.until) {
      const left = formatDuration(Math.max(1_000, Math.ceil((block.until - before) / 1_000) * 1_000));
      return { ok: false, reason: `rate limited by Discord (${block.note ?? 'limit reached'}): no request to ${route} for another ${left}` };
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
    if (status >= 200 && status < 300) return { ok: true, value: body };
    if (status === 401 || status === 403) {
      return {
        ok: false,
        reason: `Discord refused the bot token (${status} on ${route}${discordMessage(body)}): check discord.token (LISTING_AGENT_DISCORD_TOKEN) is the token of this bot, from the Bot page of the Discord Developer Portal`,
      };
    }
    if (status === 429) return { ok: false, reason: `rate limited by Discord (${note}): no request for ${formatDuration(limit.waitMs)}` };
    if (status === 404 && route === COMMANDS && configuredId !== undefined) {
      return { ok: false, reason: `Discord answered 404 to GET /applications/${configuredId}/commands${discordMessage(body)}: check the application ID is this bot's (discord.applicationId)` };
    }
    return { ok: false, reason: `Discord answered ${status} to ${route}${discordMessage(body)}` };
  }

  async function resolveApplicationId(signal: AbortSignal | undefined): Promise<Step<string>> {
    if (applicationId !== undefined) return { ok: true, value: applicationId };
    const answer = await get(APPLICATION, '/applications/@me', signal);
    if (!answer.ok) return answer;
    const id = typeof answer.value === 'object' && answer.value !== null ? (answer.value as Record<string, unknown>).id : undefined;
    if (typeof id !== 'string' || !/^\d+$/.test(id)) {
      return { ok: false, reason: `Discord's answer to ${APPLICATION} has no application id: is the API base URL right?` };
    }
    applicationId = id;
    return { ok: true, value: id };
  }

  async function loadCommands(signal: AbortSignal | undefined): Promise<CommandLoad> {
    const id = await resolveApplicationId(signal);
    if (!id.ok) return id;
    const answer = await get(COMMANDS, `/applications/${id.value}/commands?with_localizations=true`, signal);
    if (!answer.ok) return answer;
    if (!Array.isArray(answer.value)) {
      return { ok: false, reason: `Discord's answer to GET /applications/${id.value}/commands is not a JSON array: is the API base URL right?` };
    }
    return { ok: true, commands: answer.value as unknown[] };
  }

  return {
    description: `Discord REST API (global commands of ${configuredId !== undefined ? `application ${configuredId}` : "the token's application"})`,
    async load(signal) {
      if (signal?.aborted) return { ok: false, reason: 'the load was aborted' };
      let loaded: CommandLoad;
      try {
        loaded = await loadCommands(signal);
      } catch (error) {
        loaded = { ok: false, reason: `unexpected error while reading the commands from Discord: ${errorText(error)}` };
      }
      // One place scrubs every reason: no path can carry the token out.
      return loaded.ok ? loaded : { ok: false, reason: redact(loaded.reason, secrets) };
    },
  };
}
