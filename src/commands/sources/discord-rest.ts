import { redact } from '../../api/redact.js';
import { createDiscordRestClient, type DiscordRestClient } from '../../discord/client.js';
import { botToken, discordMessage, type DiscordConnectionOptions } from '../../discord/rest.js';
import { causeMessage, ListingAgentError } from '../../errors.js';
import type { CommandLoad, CommandSource } from '../types.js';

/** Options of {@link createDiscordCommandsSource}. */
export interface DiscordCommandsSourceOptions extends DiscordConnectionOptions {
  /** The bot's application ID (a snowflake). Default: the `id` of `GET /applications/@me`, asked once. */
  applicationId?: string;
}

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
  if (botToken(options.token) === '')
    throw new ListingAgentError('invalid_option', 'the Discord commands source needs the bot token: set discord.token');
  const configuredId = options.applicationId?.trim();
  if (configuredId !== undefined && !/^\d{15,21}$/.test(configuredId)) {
    throw new ListingAgentError(
      'invalid_option',
      `applicationId must be a Discord snowflake (15 to 21 digits), not ${JSON.stringify(configuredId)}`,
    );
  }
  const client = createDiscordRestClient(options);
  const loadCommands = createCommandsLoader(client, configuredId);
  return {
    description: `Discord REST API (global commands ` +
      `of ${configuredId !== undefined ? `application ${configuredId}` : "the token's application"})`,
    async load(signal) {
      if (signal?.aborted) return { ok: false, reason: 'the load was aborted' };
      let loaded: CommandLoad;
      try {
        loaded = await loadCommands(signal);
      } catch (error) {
        loaded = { ok: false, reason: `unexpected error while reading the commands from Discord: ${causeMessage(error)}` };
      }
      // The client scrubs its reasons; this catches any other path that could carry the token out.
      return loaded.ok ? loaded : { ok: false, reason: redact(loaded.reason, client.secrets) };
    },
  };
}

/** Loads the commands: the application ID (configured, or asked once), then its global commands. */
function createCommandsLoader(client: DiscordRestClient, configuredId: string | undefined) {
  let applicationId = configuredId;

  async function resolveApplicationId(signal: AbortSignal | undefined): Promise<Step<string>> {
    if (applicationId !== undefined) return { ok: true, value: applicationId };
    const answer = await client.get(APPLICATION, '/applications/@me', signal);
    if (!answer.ok) return answer;
    const id = typeof answer.body === 'object' && answer.body !== null ? (answer.body as Record<string, unknown>).id : undefined;
    if (typeof id !== 'string' || !/^\d+$/.test(id)) {
      return { ok: false, reason: `Discord's answer to ${APPLICATION} has no application id: is the API base URL right?` };
    }
    applicationId = id;
    return { ok: true, value: id };
  }

  return async function loadCommands(signal: AbortSignal | undefined): Promise<CommandLoad> {
    const id = await resolveApplicationId(signal);
    if (!id.ok) return id;
    const answer = await client.get(COMMANDS, `/applications/${id.value}/commands?with_localizations=true`, signal);
    if (!answer.ok) {
      if (answer.status === 404 && configuredId !== undefined) {
        return {
          ok: false,
          reason: `Discord answered 404 to GET ` +
            `/applications/${configuredId}/commands${discordMessage(answer.body)}: check the application ID is this bot's ` +
            `(discord.applicationId)`,
        };
      }
      return answer;
    }
    if (!Array.isArray(answer.body)) {
      return {
        ok: false,
        reason: `Discord's answer to GET /applications/${id.value}/commands is not a JSON array: is the API base URL right?`,
      };
    }
    return { ok: true, commands: answer.body as unknown[] };
  };
}
