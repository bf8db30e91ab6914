import type { Route } from '../router.js';

/** `GET /projects`: the authorization's project (access token) or every granted one (application token). */
export const v1ProjectListRoutes: Route[] = [];
