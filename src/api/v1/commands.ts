import type { ApiContext } from '../context.js';

/** The v1 commands operations. */
export function createCommandsApi(ctx: ApiContext) {
  void ctx;
  return {};
}

/** The v1 commands operations of a {@link ListingClient}. */
export type CommandsApi = ReturnType<typeof createCommandsApi>;
