import type { ApiContext } from '../context.js';

/** The v1 votes operations. */
export function createVotesApi(ctx: ApiContext) {
  void ctx;
  return {};
}

/** The v1 votes operations of a {@link ListingClient}. */
export type VotesApi = ReturnType<typeof createVotesApi>;
