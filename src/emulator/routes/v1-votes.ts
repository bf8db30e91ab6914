import type { Route } from '../router.js';

/** v1 votes: the cursor list and the single-user status. */
export const v1VoteRoutes: Route[] = [];
