import type { Reply, RequestContext } from './http.js';
import { fail } from './http.js';

/** A route handler. */
type Handler = (ctx: RequestContext) => Reply | Promise<Reply>;

/** One route: a method and a pattern such as `/projects/:project_id/votes/:user_id`. */
export interface Route {
  method: string;
  pattern: string;
  handler: Handler;
}

/** A route table for one family. */
export interface Router {
  /** Finds the handler for a path, filling `params`; throws 404 or 405 (with `Allow`). */
  resolve(method: string, path: string): { handler: Handler; params: Record<string, string> };
}

function matchPattern(pattern: string[], segments: string[]): Record<string, string> | undefined {
  if (pattern.length !== segments.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i += 1) {
    const expected = pattern[i]!;
    const actual = segments[i]!;
    if (expected.startsWith(':')) {
      if (actual === '') return undefined;
      params[expected.slice(1)] = actual;
    } else if (expected !== actual) {
      return undefined;
    }
  }
  return params;
}

function split(path: string): string[] {
  const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  return trimmed.split('/').slice(1).map((segment) => {
    try {
      return decodeURIComponent(segment);
    } catch {
      return segment;
    }
  });
}

/** Builds a router over `routes`. A route matching the path but not the method gives 405. */
export function createRouter(routes: Route[]): Router {
  const compiled = routes.map((route) => ({ ...route, segments: split(route.pattern) }));
  return {
    resolve(method, path) {
      const segments = split(path);
      const allowed = new Set<string>();
      // Literal segments win over parameters (`/projects/@me` before `/projects/:id` is not needed:
      // handlers see `@me` as the id), so first match in table order is enough.
      for (const route of compiled) {
        const params = matchPattern(route.segments, segments);
        if (!params) continue;
        if (route.method === method || (method === 'HEAD' && route.method === 'GET')) {
          return { handler: route.handler, params };
        }
        allowed.add(route.method);
      }
      if (allowed.size > 0) {
        fail(405, `${method} is not allowed on this path; allowed: ${[...allowed].join(', ')}`, {
          headers: { allow: [...allowed].join(', ') },
        });
      }
      return fail(404, `no route for ${method} ${path}`);
    },
  };
}
