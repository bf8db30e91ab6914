import type { ApiContext } from '../context.js';

/** The v1 metrics operations. */
export function createMetricsApi(ctx: ApiContext) {
  void ctx;
  return {};
}

/** The v1 metrics operations of a {@link ListingClient}. */
export type MetricsApi = ReturnType<typeof createMetricsApi>;
