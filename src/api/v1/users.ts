import type { ApiContext } from '../context.js';

/** The v1 users operations. */
export function createUsersApi(ctx: ApiContext) {
  void ctx;
  return {};
}

/** The v1 users operations of a {@link ListingClient}. */
export type UsersApi = ReturnType<typeof createUsersApi>;
