import { CONTRACT_LIMITS, SERVICE_SOURCE, VOTE_SOURCES, type VoteSource } from '../../contract/limits.js';
import { authorizeProject } from '../auth.js';
import type { RequestContext, Reply } from '../http.js';
import { iso } from '../clock.js';
import { fail, json } from '../http.js';
import { voteJson } from '../model.js';
import type { Route } from '../router.js';
import type { ProjectRecord, UserRecord, EmulatorVoteRecord } from '../state.js';
import { findUserByPlatformId } from '../state.js';
import { encodeVotesCursor, readVotesCursor, type VotesCursorProblem } from '../votes-cursor.js';

/** A place in a project's (created_at, seq)-ordered vote stream; a page holds votes strictly after it. */
interface Position {
  createdAt: number;
  seq: number;
}

const CURSOR_PROBLEMS: Record<VotesCursorProblem, string> = {
  malformed: 'invalid cursor: it is not a cursor this service issued',
  'bad-signature': 'invalid cursor: it is not a cursor this service issued (bad signature)',
  'other-project': 'invalid cursor: it was issued for another project',
  expired: 'invalid cursor: it expired; start again with startDate',
};

// ISO 8601 date or date-time. A date-time without an offset is read as UTC: JavaScript would read it
// as local time, which would make the emulator's answer depend on the machine's time zone.
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(Z|[+-]\d{2}(?::?\d{2})?)?)?$/i;

/** Epoch ms of an ISO 8601 `startDate`, or undefined when it is not one. */
function parseStartDate(value: string): number | undefined {
  const match = ISO_DATE.exec(value);
  if (!match) return undefined;
  let text = value.replace(' ', 'T');
  const zone = match[1];
  if (text.length > 10) {
    // Date.parse wants `+hh:mm`; ISO 8601 also allows `+hh` and `+hhmm`.
    if (zone === undefined) text += 'Z';
    else if (/^[+-]\d{2}$/.test(zone)) text += ':00';
    else if (/^[+-]\d{4}$/.test(zone)) text = `${text.slice(0, -2)}:${text.slice(-2)}`;
  }
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : ms;
}

/** Where the requested page starts: after the cursor's position, or at `startDate`. */
function startPosition(ctx: RequestContext, project: ProjectRecord): Position {
  const { emu, url } = ctx;
  const cursor = url.searchParams.get('cursor');
  const startDate = url.searchParams.get('startDate');
  if (cursor !== null) {
    // The contract: cursor takes precedence and startDate is then ignored (not even validated).
    const read = readVotesCursor(emu.signingKey, cursor, {
      projectId: project.id,
      now: emu.clock.now(),
      ttlSeconds: emu.settings.cursorTtlSeconds,
    });
    if (!read.ok) fail(400, CURSOR_PROBLEMS[read.problem]);
    return { createdAt: read.cursor.createdAt, seq: read.cursor.seq };
  }
  if (startDate === null) fail(400, 'give either cursor or startDate (an ISO 8601 date) on every request');
  const start = parseStartDate(startDate);
  if (start === undefined) fail(400, `startDate is not an ISO 8601 date: '${startDate}'`);
  const maxAgeMs = CONTRACT_LIMITS.votesStartDateMaxAgeSeconds * 1000;
  if (emu.clock.now() - start > maxAgeMs) {
    fail(400, `startDate must not be more than one year in the past (earliest: ${iso(emu.clock.now() - maxAgeMs)})`);
  }
  // seq 0 is before every vote (seq starts at 1), so "after (start, 0)" is created_at >= start.
  return { createdAt: start, seq: 0 };
}

function isAfter(vote: EmulatorVoteRecord, position: Position): boolean {
  return vote.created_at > position.createdAt || (vote.created_at === position.createdAt && vote.seq > position.seq);
}

function listVotes(ctx: RequestContext): Reply {
  const { project } = authorizeProject(ctx, ctx.params.project_id!, 'project.votes.read');
  const { emu } = ctx;
  const from = startPosition(ctx, project);
  const page: EmulatorVoteRecord[] = [];
  for (const vote of emu.state.votes) {
    if (page.length >= emu.settings.votesPageSize) break;
    if (vote.project_id === project.id && isAfter(vote, from)) page.push(vote);
  }
  const last = page.at(-1);
  // An empty page keeps the position, so a poller can come back later and see new votes.
  const next: Position = last ? { createdAt: last.created_at, seq: last.seq } : from;
  const cursor = encodeVotesCursor(emu.signingKey, { projectId: project.id, ...next, issuedAt: emu.clock.now() });
  return json(200, { cursor, data: page.map(voteJson) });
}

function isVoteSource(value: string): value is VoteSource {
  return (VOTE_SOURCES as readonly string[]).includes(value);
}

function voteStatus(ctx: RequestContext): Reply {
  const { project } = authorizeProject(ctx, ctx.params.project_id!, 'project.votes.read');
  const { state, clock } = ctx.emu;
  const source = ctx.url.searchParams.get('source') ?? SERVICE_SOURCE;
  if (!isVoteSource(source)) {
    fail(400, `source must be one of ${VOTE_SOURCES.join(', ')} (default ${SERVICE_SOURCE}); got '${source}'`);
  }
  const userId = ctx.params.user_id!;
  const user: UserRecord | undefined =
    source === SERVICE_SOURCE ? state.users.get(userId) : findUserByPlatformId(state, userId);
  if (!user) fail(404, `no user ${userId} in the ${source} namespace`);
  const now = clock.now();
  // Votes are in ascending order, so the first match from the end is the most recent one cast so far.
  let latest: EmulatorVoteRecord | undefined;
  for (let i = state.votes.length - 1; i >= 0; i -= 1) {
    const vote = state.votes[i]!;
    if (vote.project_id === project.id && vote.user_id === user.id && vote.created_at <= now) {
      latest = vote;
      break;
    }
  }
  if (!latest) fail(404, 'the user has never voted for this project');
  if (now >= latest.expires_at) fail(404, "the user's vote has expired");
  return json(200, { created_at: iso(latest.created_at), expires_at: iso(latest.expires_at), weight: latest.weight });
}

/**
 * v1 votes (paths relative to `/api/v1`), both with scope `project.votes.read`:
 * - `GET /projects/:project_id/votes?cursor=|startDate=`: `{cursor, data}` in ascending
 *   (created_at, seq) order, `settings.votesPageSize` per page (default 100). The cursor is always
 *   returned, also with an empty `data`, and keeps its position on an empty page.
 * - `GET /projects/:project_id/votes/:user_id?source=`: the user's active vote (`source` default
 *   `topgg`, the service's own IDs; `discord` for platform Snowflakes), 404 when none is active.
 */
export const v1VoteRoutes: Route[] = [
  { method: 'GET', pattern: '/projects/:project_id/votes', handler: listVotes },
  { method: 'GET', pattern: '/projects/:project_id/votes/:user_id', handler: voteStatus },
];
