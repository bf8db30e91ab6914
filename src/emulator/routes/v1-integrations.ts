import type { Route } from '../router.js';

/** v1 integrations: list, connect (handshake), disconnect (`integration.delete`). */
export const v1IntegrationRoutes: Route[] = [];
