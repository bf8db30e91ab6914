import type { ApiContext } from '../context.js';

/** The v1 integrations operations. */
export function createIntegrationsApi(ctx: ApiContext) {
  void ctx;
  return {};
}

/** The v1 integrations operations of a {@link ListingClient}. */
export type IntegrationsApi = ReturnType<typeof createIntegrationsApi>;
