import type { Route } from '../router.js';

/** v1 webhooks: list, create, delete, rotate, test (only the calling application's). */
export const v1WebhookRoutes: Route[] = [];
