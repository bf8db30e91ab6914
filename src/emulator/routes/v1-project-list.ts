import { authenticateProjectList, liveAuthorizations } from '../auth.js';
import type { Reply, RequestContext } from '../http.js';
import { fail, json } from '../http.js';
import { projectListItem } from '../model.js';
import type { Route } from '../router.js';
import type { ApplicationRecord, ProjectRecord } from '../state.js';

/** Where the next page of an application token's list starts scanning. */
interface ProjectScanCursor {
  /** Index into the projects in listing (insertion) order. */
  at: number;
  /** The ID of the last project scanned, to resume correctly if earlier projects were deleted. */
  after: string | null;
}

/** Encodes a scan position as an opaque base64url cursor. */
function encodeProjectCursor(cursor: ProjectScanCursor): string {
  return Buffer.from(JSON.stringify({ v: 1, at: cursor.at, after: cursor.after })).toString('base64url');
}

/** Decodes a cursor from {@link encodeProjectCursor}; undefined when it is malformed. */
function decodeProjectCursor(text: string): ProjectScanCursor | undefined {
  if (!/^[A-Za-z0-9_-]+$/.test(text)) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const { v, at, after } = parsed as Record<string, unknown>;
  if (v !== 1 || !Number.isSafeInteger(at) || (at as number) < 0) return undefined;
  if (after !== null && typeof after !== 'string') return undefined;
  return { at: at as number, after };
}

/** The index to resume at: just past `after` when it still exists, else the recorded index. */
function resumeIndex(projects: ProjectRecord[], cursor: ProjectScanCursor): number {
  if (cursor.after !== null && projects[cursor.at - 1]?.id !== cursor.after) {
    const index = projects.findIndex((project) => project.id === cursor.after);
    if (index >= 0) return index + 1;
  }
  return Math.min(cursor.at, projects.length);
}

/**
 * One page for an application token: scans the next `applicationTokenProjectsPageSize` projects and
 * keeps the granted ones, so a page can be empty while later pages hold projects (as the contract
 * allows). `cursor` is present while projects remain to scan.
 */
function applicationPage(ctx: RequestContext, application: ApplicationRecord): Reply {
  const { state, settings } = ctx.emu;
  const projects = [...state.projects.values()];
  const cursorText = ctx.url.searchParams.get('cursor');
  let start = 0;
  if (cursorText) {
    const cursor = decodeProjectCursor(cursorText);
    if (!cursor) fail(400, 'invalid cursor: pass the cursor of the previous page unchanged');
    start = resumeIndex(projects, cursor);
  }
  const end = Math.min(start + Math.max(1, settings.applicationTokenProjectsPageSize), projects.length);
  const scanned = projects.slice(start, end);
  const granted = scanned.filter((project) => liveAuthorizations(state, application.client_id, project).length > 0);
  const body: { projects: ReturnType<typeof projectListItem>[]; cursor?: string } = { projects: granted.map(projectListItem) };
  if (end < projects.length) body.cursor = encodeProjectCursor({ at: end, after: scanned.at(-1)?.id ?? null });
  return json(200, body);
}

/** `GET /projects`: the authorization's project (access token) or every granted one (application token). */
export const v1ProjectListRoutes: Route[] = [
  {
    method: 'GET',
    pattern: '/projects',
    handler: (ctx) => {
      const token = authenticateProjectList(ctx);
      if (token.kind === 'application') return applicationPage(ctx, token.application);
      // An access token covers one project; `cursor` means nothing here and is ignored.
      const project = ctx.emu.state.projects.get(token.authorization.project_id);
      return json(200, { projects: project ? [projectListItem(project)] : [] });
    },
  },
];
