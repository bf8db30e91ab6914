import { requireValid } from '../context.js';
import { type ProjectEdit, validateProjectEdit } from '../../contract/project-edit.js';
import type { ApiContext, CallOptions } from '../context.js';
import { projectSegment, requireCredential } from '../credentials.js';
import {
  type Project,
  type ProjectListItem,
  type ProjectListPage,
  projectListPageSchema,
  projectSchema,
} from '../schemas/projects.js';

/**
 * `GET /projects` (paged), `GET /projects/:project_id` and `PATCH /projects/:project_id`.
 * Project-scoped calls take `projectId` last but one: leave it out with a project token (`@me`),
 * or with an OAuth client that has a default project; pass it with an application token.
 */

/** The body of {@link ProjectsApi.update}: text per locale; at least one of the two maps. */
export type ProjectUpdate = ProjectEdit;

/** The v1 projects operations. */
export function createProjectsApi(ctx: ApiContext) {
  /**
   * One page of `GET /projects`. With an OAuth access token the page holds the authorization's one
   * project; with an application token up to 100 granted projects, and `cursor` is present while
   * more pages exist (a page may be empty while later ones are not). A project token is refused
   * locally with a `CredentialError`.
   * @param cursor The `cursor` of the previous page; default none (the first page).
   */
  async function listPage(cursor?: string, options?: CallOptions): Promise<ProjectListPage> {
    requireCredential(ctx.credential, 'projects.list', ['oauth', 'application']);
    return ctx.v1({
      operation: 'projects.list',
      method: 'GET',
      path: '/projects',
      query: { cursor },
      idempotent: true,
      response: projectListPageSchema,
      options,
    });
  }

  /**
   * Every project this credential reaches, paging `GET /projects` until `cursor` is absent (empty
   * pages in the middle are passed over). Errors, the local `CredentialError` for a project token
   * included, surface on the first step of the iteration.
   */
  async function* list(options?: CallOptions): AsyncGenerator<ProjectListItem, void, undefined> {
    let cursor: string | undefined;
    do {
      const page = await listPage(cursor, options);
      yield* page.projects;
      // An empty string would restart from the first page forever; the contract's cursor is never empty.
      cursor = page.cursor === '' ? undefined : page.cursor;
    } while (cursor !== undefined);
  }

  return {
    list,
    listPage,

    /**
     * `GET /projects/:project_id` (scope `project.information.read`): the project's detail.
     * @param projectId Default: `@me` with a project token, the client's `projectId` with OAuth.
     */
    async get(projectId?: string, options?: CallOptions): Promise<Project> {
      const segment = projectSegment(ctx.credential, 'projects.get', projectId);
      return ctx.v1({
        operation: 'projects.get',
        method: 'GET',
        path: `/projects/${segment}`,
        idempotent: true,
        response: projectSchema,
        options,
      });
    },

    /**
     * `PATCH /projects/:project_id` (scope `project.information.write`): sets the headline (3 to
     * 140 characters) and/or page content (Markdown, 300 to 50,000) per supported locale; other
     * locales keep their text. Checked before sending (a `ValidationError` naming the field, and
     * no request). The website may take up to an hour to show the change.
     * @param projectId Default: `@me` with a project token, the client's `projectId` with OAuth.
     */
    async update(edit: ProjectUpdate, projectId?: string, options?: CallOptions): Promise<void> {
      const segment = projectSegment(ctx.credential, 'projects.update', projectId);
      const body = requireValid('projects.update', validateProjectEdit(edit));
      await ctx.v1({ operation: 'projects.update', method: 'PATCH', path: `/projects/${segment}`, json: body, idempotent: true, options });
    },
  };
}

/** The v1 projects operations of a {@link ListingClient}. */
export type ProjectsApi = ReturnType<typeof createProjectsApi>;
