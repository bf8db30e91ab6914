import { refuseRequest } from '../context.js';
import { CONTRACT_LIMITS, SERVICE_SOURCE, VOTE_SOURCES, type VoteSource } from '../../contract/limits.js';
import type { ApiContext, CallOptions } from '../context.js';
import { projectSegment } from '../credentials.js';
import { NotFoundError } from '../errors.js';
import { type VoteRecord, type VoteStatus, type VotesPage, votesPageSchema, voteStatusSchema } from '../schemas/votes.js';

/** Where {@link VotesApi.pages} starts: a stored `cursor`, else `startDate`. One of the two is required. */
export interface VotesFrom {
  /** The first vote time to list, at most one year ago (a `Date`, or an ISO 8601 string). */
  startDate?: Date | string;
  /** A cursor from an earlier page; takes precedence, and `startDate` is then not sent. */
  cursor?: string;
}

/** Options of {@link VotesApi.status}. */
export interface VoteStatusQuery {
  /**
   * The namespace of `userId`: `topgg`, the service's own user IDs (the default, left out of the
   * query as decisions.md asks), or `discord`, the user's platform Snowflake.
   */
  source?: VoteSource;
}

const OP = 'votes.pages';

/** The query of the first page, or the local problem that keeps it from being sent. */
function firstQuery(from: VotesFrom, nowMs: number): { cursor: string } | { startDate: string } {
  if (from.cursor !== undefined) {
    if (typeof from.cursor !== 'string' || from.cursor === '') refuseRequest(OP, 'cursor', 'must be a cursor string from an earlier page');
    return { cursor: from.cursor };
  }
  const { startDate } = from;
  if (startDate === undefined) return refuseRequest(OP, '', 'give either cursor or startDate');
  const start = startDate instanceof Date ? startDate.getTime() : typeof startDate === 'string' ? Date.parse(startDate) : Number.NaN;
  if (Number.isNaN(start)) refuseRequest(OP, 'startDate', 'must be a valid Date or an ISO 8601 date string');
  const maxAgeMs = CONTRACT_LIMITS.votesStartDateMaxAgeSeconds * 1000;
  if (nowMs - start > maxAgeMs) {
    const earliest = new Date(nowMs - maxAgeMs).toISOString();
    refuseRequest(OP, 'startDate', `must not be more than one year in the past (earliest: ${earliest})`);
  }
  // A string is sent as given, so the caller's offset (or date-only form) reaches the service.
  return { startDate: startDate instanceof Date ? startDate.toISOString() : startDate };
}

/** The v1 votes operations. */
export function createVotesApi(ctx: ApiContext) {
  /**
   * The votes cursor: pages of `GET /projects/:project_id/votes` (scope `project.votes.read`) in
   * ascending creation order, 100 per page by default, until a page has empty `data`. That last
   * empty page is yielded too: its `cursor` is where a later poll resumes to see only new votes.
   * Local refusals (neither `cursor` nor `startDate`, a `startDate` more than a year old by the
   * client's clock, a project token with a `projectId`) surface on the first step, as a
   * `ValidationError` or `CredentialError`, before any request.
   * @param projectId Default: `@me` with a project token, the client's `projectId` with OAuth.
   */
  async function* pages(from: VotesFrom, projectId?: string, options?: CallOptions): AsyncGenerator<VotesPage, void, undefined> {
    const segment = projectSegment(ctx.credential, 'votes.pages', projectId);
    let query: { cursor: string } | { startDate: string } = firstQuery(from, ctx.clock.now());
    for (;;) {
      const page = await ctx.v1({
        operation: 'votes.pages',
        method: 'GET',
        path: `/projects/${segment}/votes`,
        query,
        idempotent: true,
        response: votesPageSchema,
        options,
      });
      yield page;
      if (page.data.length === 0) return;
      query = { cursor: page.cursor };
    }
  }

  /**
   * Every vote from `from` on, one at a time, over {@link pages}. Keep the page cursor (from
   * `pages`) instead when polling must resume where it stopped.
   * @param projectId Default: `@me` with a project token, the client's `projectId` with OAuth.
   */
  async function* iterate(from: VotesFrom, projectId?: string, options?: CallOptions): AsyncGenerator<VoteRecord, void, undefined> {
    for await (const page of pages(from, projectId, options)) yield* page.data;
  }

  return {
    pages,
    iterate,

    /**
     * `GET /projects/:project_id/votes/:user_id` (scope `project.votes.read`): the user's active
     * vote, or `null` when the service answers 404: the user is unknown, never voted, or the vote
     * expired. The contract gives a project that is not granted (or no longer exists) the same
     * 404, so a wrong `projectId` reads as `null` too; `projects.get` tells the two apart.
     * @param userId The user's ID in the namespace `query.source` names (default the service's own).
     * @param projectId Default: `@me` with a project token, the client's `projectId` with OAuth.
     */
    async status(userId: string, query: VoteStatusQuery = {}, projectId?: string, options?: CallOptions): Promise<VoteStatus | null> {
      const segment = projectSegment(ctx.credential, 'votes.status', projectId);
      if (typeof userId !== 'string' || userId === '') refuseRequest('votes.status', 'userId', 'must be a user ID');
      const source = query.source ?? SERVICE_SOURCE;
      if (!(VOTE_SOURCES as readonly string[]).includes(source)) {
        refuseRequest('votes.status', 'source', `must be one of ${VOTE_SOURCES.join(', ')} (default ${SERVICE_SOURCE})`);
      }
      try {
        return await ctx.v1({
          operation: 'votes.status',
          method: 'GET',
          path: `/projects/${segment}/votes/${encodeURIComponent(userId)}`,
          query: { source: source === SERVICE_SOURCE ? undefined : source },
          idempotent: true,
          response: voteStatusSchema,
          options,
        });
      } catch (error) {
        if (error instanceof NotFoundError) return null;
        throw error;
      }
    },
  };
}

/** The v1 votes operations of a {@link ListingClient}. */
export type VotesApi = ReturnType<typeof createVotesApi>;
