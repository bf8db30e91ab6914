import type { ApiContext } from '../context.js';

/** The v1 webhooks operations. */
export function createWebhooksApi(ctx: ApiContext) {
  void ctx;
  return {};
}

/** The v1 webhooks operations of a {@link ListingClient}. */
export type WebhooksApi = ReturnType<typeof createWebhooksApi>;
