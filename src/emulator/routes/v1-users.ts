import type { Route } from '../router.js';

/** v1 user endpoints: `@me`, the user's projects, project creation as `draft`. */
export const v1UserRoutes: Route[] = [];
