import type { FieldIssue } from '../../errors.js';
import { type Platform, PLATFORM_TYPES } from '../../contract/limits.js';
import { headlineProblem, pageContentProblem } from '../../contract/project-edit.js';
import { type ApiContext, type CallOptions, checkRequest } from '../context.js';
import { requireCredential } from '../credentials.js';
import { type User, type UserProject, userProjectListSchema, userProjectSchema, userSchema } from '../schemas/users.js';

/**
 * The body of {@link UsersApi.createProject}: a platform and a type it allows (`discord`: `bot` or
 * `server`; `roblox`: `game`; `minecraft`: `game_server`), checked before sending.
 */
export type CreateProjectInput = {
  [P in Platform]: {
    platform: P;
    type: (typeof PLATFORM_TYPES)[P][number];
    /** The project's ID on the platform (a Discord Snowflake, a Roblox ID, a Minecraft host[:port]). */
    platform_id: string;
    /** 3 to 140 characters. Default: the platform's description. */
    headline?: string;
    /** Markdown, 300 to 50,000 characters. Default: the platform's description. */
    page_content?: string;
  };
}[Platform];

/** Every problem of a project creation body, by the contract's rules; empty when it is valid. */
function createProjectProblems(input: CreateProjectInput): FieldIssue[] {
  const platforms = Object.keys(PLATFORM_TYPES);
  // Read through `unknown`: callers from plain JavaScript can send anything.
  if (typeof input !== 'object' || input === null) return [{ path: '', message: 'must be an object {platform, type, platform_id}' }];
  const issues: FieldIssue[] = [];
  const raw = input as unknown as Record<string, unknown>;
  if (typeof raw.platform !== 'string' || !Object.hasOwn(PLATFORM_TYPES, raw.platform)) {
    issues.push({ path: 'platform', message: `must be one of ${platforms.join(', ')}` });
  } else {
    const types: readonly string[] = PLATFORM_TYPES[raw.platform as Platform];
    if (typeof raw.type !== 'string' || !types.includes(raw.type)) {
      issues.push({ path: 'type', message: `must be ${types.join(' or ')} for the ${raw.platform} platform` });
    }
  }
  if (typeof raw.platform_id !== 'string' || raw.platform_id === '') {
    issues.push({ path: 'platform_id', message: 'is required: the project\'s ID on the platform' });
  }
  for (const [field, problem] of [['headline', headlineProblem], ['page_content', pageContentProblem]] as const) {
    const found = raw[field] === undefined ? null : problem(raw[field]);
    if (found !== null) issues.push({ path: field, message: found });
  }
  return issues;
}

/**
 * The v1 user endpoints: the user who authorized the application. They need an OAuth access
 * token; an application token or a project token is refused locally (the service would answer
 * 403).
 */
export function createUsersApi(ctx: ApiContext) {
  const allow = (operation: string) => requireCredential(ctx.credential, operation, ['oauth']);

  return {
    /** The authorizing user (`GET /users/@me`). Scope `user.identify`. */
    async me(options?: CallOptions): Promise<User> {
      allow('users.me');
      return ctx.v1({ operation: 'users.me', method: 'GET', path: '/users/@me', idempotent: true, response: userSchema, options });
    },

    /** The projects the user owns or administers (`GET /users/@me/projects`). Scope `user.projects.read`. */
    async projects(options?: CallOptions): Promise<UserProject[]> {
      allow('users.projects');
      return ctx.v1({
        operation: 'users.projects',
        method: 'GET',
        path: '/users/@me/projects',
        idempotent: true,
        response: userProjectListSchema,
        options,
      });
    },

    /**
     * Lists a new project as a `draft` for the user (201); they complete and submit it in the
     * dashboard. Checked before sending (`ValidationError`, subject `request`). Never retried once
     * it may have reached the service. 409 (`ConflictError`) when the platform ID is already
     * listed; 422 when the platform does not know it. Scope `user.projects.write`.
     */
    async createProject(input: CreateProjectInput, options?: CallOptions): Promise<UserProject> {
      const operation = 'users.createProject';
      allow(operation);
      checkRequest(operation, createProjectProblems(input));
      const body: Record<string, string> = { platform: input.platform, type: input.type, platform_id: input.platform_id };
      if (input.headline !== undefined) body.headline = input.headline;
      if (input.page_content !== undefined) body.page_content = input.page_content;
      return ctx.v1({
        operation,
        method: 'POST',
        path: '/users/@me/projects',
        json: body,
        idempotent: false,
        response: userProjectSchema,
        options,
      });
    },
  };
}

/** The v1 user operations of a {@link ListingClient}. */
export type UsersApi = ReturnType<typeof createUsersApi>;
