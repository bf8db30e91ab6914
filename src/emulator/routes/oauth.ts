import type { Route } from '../router.js';

/** `POST /api/v1/oauth2/token` and `POST /api/v1/oauth2/revoke` (paths relative to `/api/v1`). */
export const oauthRoutes: Route[] = [];

/** `GET /oauth2/authorize` (the consent page, and `login_as`/`decision` for scripts). */
export const authorizeRoutes: Route[] = [];
