import type { ApiContext } from '../context.js';

/** The v1 announcements operations. */
export function createAnnouncementsApi(ctx: ApiContext) {
  void ctx;
  return {};
}

/** The v1 announcements operations of a {@link ListingClient}. */
export type AnnouncementsApi = ReturnType<typeof createAnnouncementsApi>;
