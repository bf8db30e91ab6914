import { redact } from '../../api/redact.js';
import type { CommandLoad, CommandSource } from '../types.js';
import { errorMessage } from '../../errors.js';

/*
 * The bot's global commands through its own discord.js Client (embedded mode). Nothing here
 * imports discord.js (an optional peer): the Client is read by shape.
 */

/** The parts of a discord.js `ApplicationCommand` the source copies (camelCase, as discord.js keeps them). */
export interface ApplicationCommandLike {
  type: number;
  name: string;
  description: string;
  nameLocalizations?: unknown;
  descriptionLocalizations?: unknown;
  /** discord.js's camelCase options (`minValue`, `channelTypes`, ...); `normaliseCommands` reads that spelling. */
  options?: readonly unknown[];
  /** A `PermissionsBitField`, or null when anyone may use the command. */
  defaultMemberPermissions?: { readonly bitfield: bigint | number } | null;
  nsfw?: boolean;
  integrationTypes?: readonly number[] | null;
  contexts?: readonly number[] | null;
}

/** A discord.js `Collection` as far as the source reads it. */
export interface CommandCollectionLike<V> {
  values(): Iterable<V>;
}

/**
 * The parts of a discord.js `Client` the source reads. Every field is optional so that any value
 * the agent recognised as a Client fits; what is missing at run time is reported, not thrown.
 */
export interface CommandsClientLike {
  isReady?(): boolean;
  readyTimestamp?: number | null;
  /** Only to keep it out of reasons. */
  token?: string | null;
  /** `ClientApplication`, set from READY. */
  application?: {
    readonly id: string;
    commands: {
      fetch(options: { withLocalizations?: boolean }): Promise<CommandCollectionLike<ApplicationCommandLike>>;
    };
  } | null;
}

/**
 * A discord.js `ApplicationCommand` in Discord's API form (snake_case), field by field. Its
 * `toJSON()` is not used: it flattens every property in discord.js's camelCase, the client and
 * manager references included, which is neither Discord's form nor small.
 */
function commandFromDiscordJs(command: ApplicationCommandLike): Record<string, unknown> {
  const bits = command.defaultMemberPermissions?.bitfield;
  return {
    type: command.type,
    name: command.name,
    description: command.description,
    name_localizations: command.nameLocalizations ?? undefined,
    description_localizations: command.descriptionLocalizations ?? undefined,
    options: command.options ? [...command.options] : undefined,
    default_member_permissions: bits === undefined ? undefined : bits.toString(),
    nsfw: command.nsfw,
    integration_types: command.integrationTypes ? [...command.integrationTypes] : undefined,
    contexts: command.contexts ? [...command.contexts] : undefined,
  };
}

function isReady(client: CommandsClientLike): boolean {
  return typeof client.isReady === 'function' ? client.isReady() : client.readyTimestamp != null;
}

/**
 * The bot's registered global commands through its discord.js Client:
 * `client.application.commands.fetch({ withLocalizations: true })` (one request to
 * `GET /applications/{id}/commands?with_localizations=true`, through discord.js's own rate
 * limiting). Before the Client is ready (its application is known from READY), `load()` answers
 * `{ ok: false, reason }`; a failed fetch too, without the token. `load()` never throws.
 */
export function createClientCommandsSource(client: CommandsClientLike): CommandSource {
  const secrets = () => (typeof client.token === 'string' ? [client.token] : []);

  async function load(signal?: AbortSignal): Promise<CommandLoad> {
    if (signal?.aborted) return { ok: false, reason: 'the load was aborted' };
    const application = client.application;
    if (!isReady(client) || !application) {
      return { ok: false, reason: 'the discord.js Client is not ready yet: its commands can be read once it has logged in' };
    }
    try {
      const fetched = await application.commands.fetch({ withLocalizations: true });
      return { ok: true, commands: [...fetched.values()].map(commandFromDiscordJs) };
    } catch (error) {
      const message = errorMessage(error);
      const status = (error as { status?: unknown } | undefined)?.status;
      const hint = status === 401 || status === 403 ? ': check the token the Client logged in with' : '';
      return {
        ok: false,
        reason: redact(
          `discord.js could not fetch the application's commands (${message.replace(/\s+/g, ' ').slice(0, 300)})${hint}`,
          secrets(),
        ),
      };
    }
  }

  return { description: 'discord.js Client (global commands)', load };
}
