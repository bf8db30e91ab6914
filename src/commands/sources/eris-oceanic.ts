import { redact } from '../../api/redact.js';
import type { CommandLoad, CommandSource } from '../types.js';
import { errorMessage } from '../../errors.js';

/*
 * The bot's global commands through its own Eris or Oceanic.js Client (embedded mode). Neither
 * library keeps the application's command definitions in a cache (nor does discord.js: its source
 * fetches too), so the source asks Discord through the Client, with the Client's token and rate
 * limits: `GET /applications/{id}/commands?with_localizations=true`, in Discord's own form
 * (snake_case), which the normaliser takes as it is. Nothing here imports either library.
 */

/** The parts of an Eris `Client` the source reads. */
export interface ErisCommandsClientLike {
  ready?: boolean;
  /** READY's `application` (`{ id, flags }`), set once a shard is ready. */
  application?: { id?: unknown } | null;
  /** Eris's public request handler: `request(method, url, auth, body)`; a GET's body is its query. */
  requestHandler: { request(method: string, url: string, auth?: boolean, body?: Record<string, unknown>): Promise<unknown> };
}

/** The parts of an Oceanic.js `Client` the source reads. */
export interface OceanicCommandsClientLike {
  ready?: boolean;
  /** A getter that throws until a shard is READY. */
  readonly application?: { readonly id?: unknown };
  rest: { authRequest(options: { method: string; path: string; query?: URLSearchParams }): Promise<unknown> };
  options?: { auth?: string | null };
}

/** One library's way of asking, and what it calls things. */
interface GatewayCommandsReader {
  library: 'Eris' | 'Oceanic.js';
  ready(): boolean;
  applicationId(): string | undefined;
  fetch(applicationId: string): Promise<unknown>;
  /** The token in the forms an error could carry it. */
  secrets(): string[];
}

/** The HTTP status of a failed request, where each library keeps it. */
function statusOf(error: unknown): unknown {
  const fields = error as { status?: unknown; res?: { statusCode?: unknown } } | undefined;
  return fields?.status ?? fields?.res?.statusCode;
}

function tokenForms(token: unknown): string[] {
  if (typeof token !== 'string' || token === '') return [];
  return token.startsWith('Bot ') ? [token, token.slice(4)] : [token];
}

function createGatewayCommandsSource(reader: GatewayCommandsReader): CommandSource {
  async function load(signal?: AbortSignal): Promise<CommandLoad> {
    if (signal?.aborted) return { ok: false, reason: 'the load was aborted' };
    const applicationId = reader.ready() ? reader.applicationId() : undefined;
    if (applicationId === undefined) {
      return { ok: false, reason: `the ${reader.library} Client is not ready yet: its commands can be read once it has connected` };
    }
    try {
      const body = await reader.fetch(applicationId);
      if (!Array.isArray(body)) return { ok: false, reason: `${reader.library} answered something that is not a list of commands` };
      return { ok: true, commands: body };
    } catch (error) {
      const message = errorMessage(error);
      const status = statusOf(error);
      const hint = status === 401 || status === 403 ? ': check the token the Client connected with' : '';
      return {
        ok: false,
        reason: redact(
          `${reader.library} could not fetch the application's commands (${message.replace(/\s+/g, ' ').slice(0, 300)})${hint}`,
          reader.secrets(),
        ),
      };
    }
  }
  return { description: `${reader.library} Client (global commands)`, load };
}

/**
 * The bot's registered global commands through its Eris Client: one request through Eris's
 * request handler (its rate limiting, its token). Before the Client is ready, `load()` answers
 * `{ ok: false, reason }`; a failed request too, without the token. `load()` never throws.
 */
export function createErisCommandsSource(client: ErisCommandsClientLike): CommandSource {
  return createGatewayCommandsSource({
    library: 'Eris',
    ready: () => client.ready === true,
    applicationId: () => {
      const id = client.application?.id;
      return typeof id === 'string' && id !== '' ? id : undefined;
    },
    fetch: (id) => client.requestHandler.request('GET', `/applications/${id}/commands`, true, { with_localizations: true }),
    // Eris keeps its token in a non-enumerable `_token`.
    secrets: () => tokenForms((client as { _token?: unknown })._token),
  });
}

/**
 * The bot's registered global commands through its Oceanic.js Client: one request through
 * `client.rest.authRequest` (its rate limiting, its token), in Discord's form. Before the Client is
 * ready, `load()` answers `{ ok: false, reason }`; a failed request too, without the token.
 * `load()` never throws.
 */
export function createOceanicCommandsSource(client: OceanicCommandsClientLike): CommandSource {
  return createGatewayCommandsSource({
    library: 'Oceanic.js',
    ready: () => client.ready === true,
    applicationId: () => {
      try {
        const id = client.application?.id;
        return typeof id === 'string' && id !== '' ? id : undefined;
      } catch {
        // `Client#application` throws until a shard is READY.
        return undefined;
      }
    },
    fetch: (id) =>
      client.rest.authRequest({
        method: 'GET',
        path: `/applications/${id}/commands`,
        query: new URLSearchParams({ with_localizations: 'true' }),
      }),
    secrets: () => tokenForms(client.options?.auth),
  });
}
