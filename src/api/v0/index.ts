import type { ApiContext } from '../context.js';

/** The legacy v0 operations. */
export function createV0Api(ctx: ApiContext) {
  void ctx;
  return {};
}

/** The legacy v0 operations of a {@link ListingClient}. */
export type V0Api = ReturnType<typeof createV0Api>;
