import { silentLogger, type AgentLogger } from '../log/agent-logger.js';
import type { Readiness } from '../runtime/readiness.js';
import type { ListingClient } from '../api/client.js';
import { BadRequestError } from '../api/errors.js';
import { formatDuration } from '../config/duration.js';
import type { AgentMetrics } from '../runtime/metrics.js';
import { createSchedule, type Schedule, type ScheduleFactory } from '../runtime/scheduler.js';
import type { StateStore } from '../store/types.js';
import {
  advanceCursorState,
  cursorStateKey,
  type CursorState,
  fallbackStartDate,
  parseCursorState,
  resumeFrom,
  voteFromRecord,
} from './cursor-state.js';
import type { Vote } from './types.js';

/** The readiness component of the votes capability (the poller reports under it). */
export const VOTES_COMPONENT = 'votes';

/** Stands for the project token's own project in {@link VotePollerOptions.projectIds}. */
export const OWN_PROJECT = '@me';

/** Default of {@link VotePollerOptions.pollIntervalMs}: one minute. */
export const DEFAULT_POLL_INTERVAL_MS = 60_000;

/** Default of {@link VotePollerOptions.lookbackMs}: 12 hours, a vote's lifetime. */
export const DEFAULT_LOOKBACK_MS = 12 * 60 * 60 * 1000;

/** What the poller needs of the pipeline: an ingest that resolves once the new votes are durably pending. */
export interface VoteIngest {
  ingest(votes: readonly Vote[], road: Vote['road']): Promise<{ accepted: Vote[]; duplicates: number }>;
}

/** Options of {@link createVotePoller}. */
export interface VotePollerOptions {
  client: Pick<ListingClient, 'votes' | 'projects' | 'credentialKind'>;
  /**
   * The projects to poll, asked at every poll. `@me` ({@link OWN_PROJECT}) is the project
   * token's project; other entries are service project IDs. Default: `['@me']` with a project
   * token, else every project `client.projects.list()` yields (an OAuth access token's one
   * project, an application token's granted projects), so a newly granted project is polled
   * from the next poll on.
   */
  projectIds?: () => Promise<string[]>;
  /** Where each project's checkpoint lives (`votes:cursor:<project ID>`). */
  store: StateStore;
  pipeline: VoteIngest;
  /** How far back a project's first poll starts (clamped to the one-year limit). Default {@link DEFAULT_LOOKBACK_MS}. */
  lookbackMs?: number;
  /** Time between polls. Default {@link DEFAULT_POLL_INTERVAL_MS}. */
  pollIntervalMs?: number;
  /** Default: silent. */
  logger?: AgentLogger;
  /** Default: none. */
  metrics?: Pick<AgentMetrics, 'markSuccess'>;
  /** Default: none. */
  readiness?: Pick<Readiness, 'set'>;
  /** Epoch ms. Default `Date.now`. */
  now?: () => number;
  /** Reports a failed poll (the agent's `error` event). Default: nothing. */
  reportError?: (error: unknown) => void;
  /** Makes the poll schedule. Default {@link createSchedule}; tests pass a manual scheduler. */
  schedules?: ScheduleFactory;
  /**
   * The service ID of the project token's project (`@me`), when the caller knows it already (the
   * agent's `context.project.id`). Default: asked once with `GET /projects/@me` at the first poll.
   */
  ownProjectId?: string;
}

/** What one poll did, over every project. */
export interface PollResult {
  /** The service project IDs polled. */
  projects: string[];
  /** Pages fetched (the final empty one included). */
  pages: number;
  /** New votes handed to the pipeline. */
  accepted: number;
  /** Votes the pipeline already knew. */
  duplicates: number;
  /** Projects whose cursor was refused and restarted from a `startDate`. */
  fellBack: string[];
  /** Projects (or `projects` for the project list itself) that failed, with why. */
  failures: { project: string; error: Error }[];
}

/** The votes cursor poller. */
export interface VotePoller {
  /** Arms the poll schedule and starts a first poll in the background. */
  start(): void;
  /** Polls now (what a tick does); joins a poll in flight. Never rejects: failures are in the result. */
  poll(): Promise<PollResult>;
  /** Stops the schedule; a poll in flight ends after its current page, or is cut at `deadline` (epoch ms). */
  stop(deadline: number): Promise<void>;
}

const toError = (error: unknown) => (error instanceof Error ? error : new Error(String(error)));

/**
 * Creates the poller: every `pollIntervalMs`, for each project, pages the votes cursor from the
 * stored checkpoint (a first poll from `now - lookback`) until a page is empty, hands each page's
 * votes to the pipeline, and only once `ingest` resolved (the votes are durably pending) stores
 * the page's cursor. So a crash at any moment loses nothing: the page is fetched again and the
 * pipeline drops what it already has. A refused cursor (400: expired or invalid) restarts from
 * the newest vote already seen, inclusive. Other failures mark `votes` not ready and wait for the
 * next poll (the client already retried 429 and 5xx).
 */
export function createVotePoller(options: VotePollerOptions): VotePoller {
  const { client, store, pipeline } = options;
  const logger = options.logger ?? silentLogger;
  const now = options.now ?? Date.now;
  const lookbackMs = options.lookbackMs ?? DEFAULT_LOOKBACK_MS;
  const pollIntervalMs = options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
  const reportError = options.reportError ?? (() => undefined);
  const makeSchedule = options.schedules ?? createSchedule;
  const mark = (ready: boolean, detail: string) => options.readiness?.set(VOTES_COMPONENT, ready, detail);

  let schedule: Schedule | undefined;
  let polling: Promise<PollResult> | undefined;
  let stopping = false;
  let aborter = new AbortController();
  let ownProjectId: string | undefined = options.ownProjectId;
  /** Projects whose cursor fallback was logged at warn already: later ones go to debug. */
  const warnedFallback = new Set<string>();

  async function targets(): Promise<string[]> {
    if (options.projectIds) return options.projectIds();
    if (client.credentialKind === 'project') return [OWN_PROJECT];
    const ids: string[] = [];
    for await (const project of client.projects.list({ signal: aborter.signal })) ids.push(project.id);
    return ids;
  }

  /** The service ID of a target: `@me` is asked once, so checkpoints and votes carry the real ID. */
  async function serviceId(target: string): Promise<string> {
    if (target !== OWN_PROJECT) return target;
    ownProjectId ??= (await client.projects.get(undefined, { signal: aborter.signal })).id;
    return ownProjectId;
  }

  async function saveState(key: string, before: CursorState | undefined, after: CursorState, moved: boolean): Promise<void> {
    if (before?.cursor === after.cursor && !moved) return;
    // New votes or a first checkpoint must be on disk before the next page; a fresher cursor for
    // the same position may wait for the store's next flush (losing it loses nothing).
    await store.set(key, after, { durable: moved || before?.cursor == null });
  }

  async function pollProject(target: string, result: PollResult): Promise<void> {
    const projectId = await serviceId(target);
    result.projects.push(projectId);
    const key = cursorStateKey(projectId);
    let state = parseCursorState(await store.get(key));
    const segment = target === OWN_PROJECT ? undefined : projectId;
    let from: { cursor: string } | { startDate: Date } = resumeFrom(state, now(), lookbackMs);
    let fellBack = false;
    for (;;) {
      // True while the next request carries a cursor (the stored one, or a page's).
      let onCursor = 'cursor' in from;
      try {
        for await (const page of client.votes.pages(from, segment, { signal: aborter.signal })) {
          result.pages += 1;
          const votes = page.data.map((record) => voteFromRecord(record, projectId));
          if (votes.length > 0) {
            const outcome = await pipeline.ingest(votes, 'poll');
            result.accepted += outcome.accepted.length;
            result.duplicates += outcome.duplicates;
          }
          // Only now, with every vote of the page durably pending, does the cursor move past them.
          const next = advanceCursorState(state, { cursor: page.cursor, votes });
          await saveState(key, state, next, votes.length > 0);
          state = next;
          onCursor = true;
          if (stopping) return;
        }
        return;
      } catch (error) {
        if (!(error instanceof BadRequestError) || !onCursor || fellBack) throw error;
        fellBack = true;
        result.fellBack.push(projectId);
        const startDate = fallbackStartDate(state, now(), lookbackMs);
        from = { startDate };
        const fields = { project: projectId, startDate: startDate.toISOString(), newestKey: state?.newestKey ?? null, err: error.message };
        const message = 'the service refused the votes cursor (expired or invalid); listing again from the newest vote already seen (repeats are dropped as duplicates)';
        if (warnedFallback.has(projectId)) logger.debug(fields, message);
        else logger.warn(fields, message);
        warnedFallback.add(projectId);
      }
    }
  }

  async function doPoll(): Promise<PollResult> {
    const result: PollResult = { projects: [], pages: 0, accepted: 0, duplicates: 0, fellBack: [], failures: [] };
    let list: string[];
    try {
      list = await targets();
    } catch (error) {
      result.failures.push({ project: 'projects', error: toError(error) });
      return finish(result);
    }
    for (const target of list) {
      if (stopping) break;
      try {
        await pollProject(target, result);
      } catch (error) {
        result.failures.push({ project: target === OWN_PROJECT ? (ownProjectId ?? target) : target, error: toError(error) });
      }
    }
    return finish(result);
  }

  function finish(result: PollResult): PollResult {
    if (stopping && aborter.signal.aborted) return result;
    const every = formatDuration(pollIntervalMs);
    if (result.failures.length > 0) {
      const reason = result.failures.map((f) => `${f.project}: ${f.error.message}`).join('; ');
      mark(false, `last poll failed (retried every ${every}): ${reason}`);
      for (const failure of result.failures) {
        logger.warn({ project: failure.project, err: failure.error.message, retryInMs: pollIntervalMs }, 'votes poll failed; the cursor stays where it was and the next poll retries');
        reportError(failure.error);
      }
    } else {
      const count = result.projects.length;
      mark(true, count === 0 ? `no project to poll yet (checked every ${every})` : `polling ${count} ${count === 1 ? 'project' : 'projects'} every ${every}`);
      options.metrics?.markSuccess(VOTES_COMPONENT, now());
    }
    const fields = { projects: result.projects.length, pages: result.pages, accepted: result.accepted, duplicates: result.duplicates };
    if (result.accepted > 0) logger.info(fields, 'new votes from the cursor');
    else logger.debug(fields, 'votes poll done');
    return result;
  }

  function poll(): Promise<PollResult> {
    polling ??= doPoll().finally(() => (polling = undefined));
    return polling;
  }

  return {
    start() {
      stopping = false;
      aborter = new AbortController();
      mark(false, 'first poll of the votes cursor');
      schedule = makeSchedule({
        name: 'votes-poll',
        intervalMs: pollIntervalMs,
        onTick: async () => {
          await poll();
        },
        onError: reportError,
      });
      schedule.start();
      void poll();
    },
    poll,
    async stop(deadline) {
      stopping = true;
      schedule?.stop();
      schedule = undefined;
      const running = polling;
      if (!running) return;
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), Math.max(0, deadline - now()));
        timer.unref();
      });
      const outcome = await Promise.race([running.then(() => 'done' as const), timedOut]);
      clearTimeout(timer);
      if (outcome === 'timeout') {
        // Cut the request short; the checkpoint stays at the last page fully ingested.
        aborter.abort(new Error('the votes poller is stopping'));
        // The aborted request settles at once; an ingest cannot be cut, so do not wait for it long.
        await Promise.race([running, new Promise((resolve) => setTimeout(resolve, 1_000).unref())]);
      }
    },
  };
}
