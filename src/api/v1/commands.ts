import { requireValid } from '../context.js';
import { type ApplicationCommand, validateCommands } from '../../contract/commands.js';
import type { ApiContext, CallOptions } from '../context.js';
import { projectSegment } from '../credentials.js';

/**
 * A chat-platform application command as `PUT /projects/:project_id/commands` takes it: `name`,
 * `description`, `type`, `options`, their localizations, and any other field of the platform's
 * command object (`contexts`, `default_member_permissions`, ...), which is sent as given. The
 * rules are decisions.md's "commands validation" (one definition, in `src/contract/commands.ts`).
 */
export type { ApplicationCommand, ApplicationCommandOption } from '../../contract/commands.js';

/** Text per chat-platform locale (`en-US`, `de`). A null entry is refused before sending. */
export type CommandLocalizations = Readonly<Partial<Record<string, string | null>>> | null;

/** The fields of an option the rules read (see {@link ApplicationCommandShape}). */
export interface ApplicationCommandOptionShape {
  type: number;
  name: string;
  description: string;
  name_localizations?: CommandLocalizations;
  description_localizations?: CommandLocalizations;
  options?: readonly ApplicationCommandOptionShape[];
}

/**
 * What {@link CommandsApi.set} accepts: any object with these fields, the platform's others
 * included. It has no index signature, so interface types such as discord.js's `toJSON()` output
 * fit as well as object literals and {@link ApplicationCommand}.
 */
export interface ApplicationCommandShape {
  /** Default 1 (chat input). */
  type?: number;
  name?: string;
  name_localizations?: CommandLocalizations;
  description?: string;
  description_localizations?: CommandLocalizations;
  options?: readonly ApplicationCommandOptionShape[] | null;
}

/** The v1 commands operation. */
export function createCommandsApi(ctx: ApiContext) {
  return {
    /**
     * `PUT /projects/:project_id/commands` (scope `project.information.write`; chat-platform bots
     * only): replaces the project's commands; an empty array clears them. Checked before sending:
     * at most 100 commands; names 1 to 32 characters (chat-input: lowercase letters, digits, `-`,
     * `_`, `'`); chat-input descriptions 1 to 100; at most 25 options per level; at least one
     * English entry per command; no two commands of one type with one name. A violation is a
     * request `ValidationError` whose issues name the command and the field (`[2].name: must be
     * lowercase (command "Ping")`), and nothing is sent. Idempotent, so retried like a GET.
     * @param projectId Default: `@me` with a project token, the client's `projectId` with OAuth.
     */
    async set<C extends ApplicationCommandShape>(commands: readonly C[], projectId?: string, options?: CallOptions): Promise<void> {
      const segment = projectSegment(ctx.credential, 'commands.set', projectId);
      const body = requireValid('commands.set', validateCommands(commands));
      await ctx.v1({
        operation: 'commands.set',
        method: 'PUT',
        path: `/projects/${segment}/commands`,
        json: body,
        idempotent: true,
        options,
      });
    },
  };
}

/** The v1 commands operation of a {@link ListingClient}. */
export type CommandsApi = ReturnType<typeof createCommandsApi>;
