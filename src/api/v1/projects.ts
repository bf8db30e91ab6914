import type { ApiContext } from '../context.js';

/** The v1 projects operations. */
export function createProjectsApi(ctx: ApiContext) {
  void ctx;
  return {};
}

/** The v1 projects operations of a {@link ListingClient}. */
export type ProjectsApi = ReturnType<typeof createProjectsApi>;
