import type { Route } from '../router.js';

/** v1 project routes: list, detail, patch, commands, announcements, metrics (PATCH and batch). */
export const v1ProjectRoutes: Route[] = [];
