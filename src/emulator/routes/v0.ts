import type { Route } from '../router.js';

/** Legacy v0: bots list, bot stats, vote check, user profiles, and the token-inferred paths. */
export const v0Routes: Route[] = [];
