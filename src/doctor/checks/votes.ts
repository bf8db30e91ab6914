import { BadRequestError } from '../../api/errors.js';
import type { VotesPage } from '../../api/schemas/votes.js';
import { formatDuration } from '../../config/duration.js';
import { environmentVariableName } from '../../config/fields.js';
import { cursorStateKey, parseCursorState, resumeFrom, type CursorState } from '../../votes/cursor-state.js';
import { skippedVotesNote } from '../../votes/first-start.js';
import { formatAge } from '../runner.js';
import { fail, ok, skip, warn, type CheckOutcome, type DoctorCheck, type DoctorDeps } from '../types.js';
import { errorMessage } from '../../errors.js';

/** A cursor for a line of text: opaque and long, so its start is enough to tell two apart. */
const shortCursor = (cursor: string) => (cursor.length > 16 ? `${cursor.slice(0, 16)}…` : cursor);

/** A setting as the daemon's owner sets it: in the file, or with its variable. */
const withVariable = (path: string) => `${path} (${environmentVariableName(path.split('.'))})`;

/** Where the poller stands, in words and as details. */
function position(state: CursorState | undefined, deps: DoctorDeps): { text: string; details: Record<string, unknown> } {
  if (state?.cursor == null) {
    const { lookback } = deps.config.votes;
    const first =
      lookback > 0
        ? `from ${formatDuration(lookback)} before it on (votes.lookback)`
        : `from its start on; ${skippedVotesNote(withVariable)}`;
    return { text: `no cursor stored yet: a first start rewards votes cast ${first}`, details: { cursor: null, newestVoteAt: null } };
  }
  const newest = state.newestCreatedAt;
  const ageMs = newest === null ? null : deps.now() - Date.parse(newest);
  const seen = newest === null ? 'no vote seen yet' : `newest vote seen ${newest} (${formatAge(ageMs!)} ago)`;
  return {
    text: `stored cursor ${shortCursor(state.cursor)}, ${seen}`,
    details: { cursor: state.cursor, newestVoteAt: newest, newestVoteAgeMs: ageMs },
  };
}

/** The first page from where the poller would go on, or the outcome that says why not. */
async function firstPage(deps: DoctorDeps, state: CursorState | undefined, signal: AbortSignal): Promise<VotesPage | CheckOutcome> {
  // A start now: the first page is what a first start would list.
  const from = resumeFrom(state, { startedAt: deps.now(), lookbackMs: deps.config.votes.lookback }, deps.now());
  const pages = deps.client().votes.pages(from, undefined, { signal, timeoutMs: deps.timeoutMs });
  try {
    const next = await pages.next();
    return next.done ? { cursor: '', data: [] } : next.value;
  } catch (error) {
    const message = errorMessage(error);
    if (error instanceof BadRequestError && 'cursor' in from) {
      return warn(
        `the service refused the stored cursor (400): the poller goes back to the newest vote seen ` +
          `(${state?.newestCreatedAt ?? 'none'}) and drops the overlap as duplicates`,
        "nothing to do once; if this shows at every run, the stored cursor is not this service's (service.v1 changed?): delete the " +
          "votes:cursor key from the state",
      );
    }
    return fail(`the votes cursor did not answer: ${message}`, 'see service.token above; the poller retries at every votes.pollInterval');
  } finally {
    await pages.return(undefined).catch(() => undefined);
  }
}

/** `votes.cursor`: the cursor answers, where the stored position is and how old. */
export const votesCheck: DoctorCheck = {
  name: 'votes.cursor',
  paths: ['votes'],
  async run(deps, signal): Promise<CheckOutcome> {
    if (!deps.config.votes.enabled) return skip('votes.enabled is false: the votes cursor is not polled');
    const answer = await deps.service();
    const projectId = answer.kind === 'answer' && answer.status === 200 ? (answer.body as { id?: unknown } | undefined)?.id : undefined;
    if (typeof projectId !== 'string') return skip('needs the service to accept the token (see service.token)');
    let state: CursorState | undefined;
    try {
      state = parseCursorState(await (await deps.stateReader()).get(cursorStateKey(projectId)));
    } catch (error) {
      return fail(
        `cannot read the stored cursor: ${errorMessage(error)}`,
        'see the state and redis checks',
      );
    }
    const where = position(state, deps);
    const page = await firstPage(deps, state, signal);
    if ('status' in page) return { ...page, details: { projectId, ...where.details } };
    const waiting = page.data.length;
    return ok(`answers, ${waiting} new ${waiting === 1 ? 'vote' : 'votes'} on the next page; ${where.text}`, {
      projectId,
      nextPageVotes: waiting,
      ...where.details,
    });
  },
};
