import { silentLogger, type AgentLogger } from '../log/agent-logger.js';
import type { Readiness } from '../runtime/readiness.js';
import type { ListingClient } from '../api/client.js';
import { BadRequestError } from '../api/errors.js';
import type { AgentMetrics } from '../runtime/metrics.js';
import { createRefusalLog, type RefusalLog } from '../runtime/refusal-log.js';
import { createSchedule, type Schedule, type ScheduleFactory } from '../runtime/scheduler.js';
import type { StateStore } from '../store/types.js';
import type { InvalidVoteRecord } from '../api/schemas/votes.js';
import type { VoteRefusalReason } from '../contract/vote-fields.js';
import {
  advanceCursorState,
  cursorStateKey,
  type CursorState,
  fallbackStartDate,
  type FirstPoll,
  parseCursorState,
  resumeFrom,
  votesOfPage,
} from './cursor-state.js';
import { logFirstStart } from './first-start.js';
import { pollReadiness } from './poll-readiness.js';
import type { Vote } from './types.js';
import { timerDelay } from '../contract/timer-delay.js';

/** The readiness component of the votes capability (the poller reports under it). */
export const VOTES_COMPONENT = 'votes';

/** Stands for the project token's own project in {@link VotePollerOptions.projectIds}. */
const OWN_PROJECT = '@me';

/** Default of {@link VotePollerOptions.pollIntervalMs}: one minute. */
const DEFAULT_POLL_INTERVAL_MS = 60_000;

/** Default of {@link VotePollerOptions.lookbackMs}: none, a first start rewards the votes cast from the start on. */
const DEFAULT_LOOKBACK_MS = 0;

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
  /**
   * How far before {@link VotePollerOptions.startedAt} a project's first poll (no checkpoint yet)
   * starts, clamped to the one-year limit: the explicit backfill. Default {@link DEFAULT_LOOKBACK_MS}:
   * a first start rewards only the votes cast from the start on, and says so at `warn`.
   */
  lookbackMs?: number;
  /** Epoch ms of the agent's start, where a first poll lists from (less `lookbackMs`). Default: when the poller is made. */
  startedAt?: number;
  /** How a log line names a setting (`votes.lookback`). Default: its config path; the daemon adds its variable. */
  settingName?: (path: string) => string;
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
  /**
   * Records refused (issue 34: a compromised or buggy service): a wrong type, an ID, weight or
   * time out of the contract's bounds. Each is logged with its reason; the rest of its page is
   * taken, and the cursor moves past it.
   */
  refused: number;
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
 * stored checkpoint until a page is empty, hands each page's votes to the pipeline, and only once
 * `ingest` resolved (the votes are durably pending) stores the page's cursor. So a crash at any
 * moment loses nothing: the page is fetched again and the pipeline drops what it already has. A
 * project with no checkpoint yet is polled from `startedAt - lookbackMs` (by default the start:
 * no vote from before it is rewarded), logged once. A refused cursor (400: expired or invalid)
 * restarts from the newest vote already seen, inclusive (none seen: where the first poll
 * started). Other failures mark `votes` not ready and wait for the next poll (the client already
 * retried 429 and 5xx).
 */
export function createVotePoller(options: VotePollerOptions): VotePoller {
  const now = options.now ?? Date.now;
  const p: PollerState = {
    options,
    logger: options.logger ?? silentLogger,
    now,
    first: { startedAt: options.startedAt ?? now(), lookbackMs: options.lookbackMs ?? DEFAULT_LOOKBACK_MS },
    pollIntervalMs: options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS,
    reportError: options.reportError ?? (() => undefined),
    schedule: undefined,
    polling: undefined,
    stopping: false,
    aborter: new AbortController(),
    ownProjectId: options.ownProjectId,
    warnedFallback: new Set(),
    announcedFirst: new Set(),
    refusals: createRefusalLog({ logger: options.logger ?? silentLogger, what: 'votes from the cursor', now }),
  };
  return {
    start: () => start(p),
    poll: () => poll(p),
    stop: (deadline) => stop(p, deadline),
  };
}

/** The state of one poller. */
interface PollerState {
  readonly options: VotePollerOptions;
  readonly logger: AgentLogger;
  readonly now: () => number;
  /** Where a project's first poll starts. */
  readonly first: FirstPoll;
  readonly pollIntervalMs: number;
  readonly reportError: (error: unknown) => void;
  schedule: Schedule | undefined;
  polling: Promise<PollResult> | undefined;
  stopping: boolean;
  aborter: AbortController;
  ownProjectId: string | undefined;
  /** Projects whose cursor fallback was logged at warn already: later ones go to debug. */
  readonly warnedFallback: Set<string>;
  /** Projects whose first poll was logged already (a first poll that failed is tried again, not said again). */
  readonly announcedFirst: Set<string>;
  /** Refused records: the first of each reason per 10 s with a line, the rest in a summary. */
  readonly refusals: RefusalLog<VoteRefusalReason>;
}

const mark = (p: PollerState, ready: boolean, detail: string) => p.options.readiness?.set(VOTES_COMPONENT, ready, detail);

async function targets(p: PollerState): Promise<string[]> {
  const { client } = p.options;
  if (p.options.projectIds) return p.options.projectIds();
  if (client.credentialKind === 'project') return [OWN_PROJECT];
  const ids: string[] = [];
  for await (const project of client.projects.list({ signal: p.aborter.signal })) ids.push(project.id);
  return ids;
}

/** The service ID of a target: `@me` is asked once, so checkpoints and votes carry the real ID. */
async function serviceId(p: PollerState, target: string): Promise<string> {
  if (target !== OWN_PROJECT) return target;
  p.ownProjectId ??= (await p.options.client.projects.get(undefined, { signal: p.aborter.signal })).id;
  return p.ownProjectId;
}

async function saveState(p: PollerState, key: string, before: CursorState | undefined, after: CursorState, moved: boolean): Promise<void> {
  if (before?.cursor === after.cursor && !moved) return;
  // New votes or a first checkpoint must be on disk before the next page; a fresher cursor for
  // the same position may wait for the store's next flush (losing it loses nothing).
  await p.options.store.set(key, after, { durable: moved || before?.cursor == null });
}

async function pollProject(p: PollerState, target: string, result: PollResult): Promise<void> {
  const { client, store, pipeline } = p.options;
  const projectId = await serviceId(p, target);
  result.projects.push(projectId);
  const key = cursorStateKey(projectId);
  let state = parseCursorState(await store.get(key));
  const segment = target === OWN_PROJECT ? undefined : projectId;
  let from: { cursor: string } | { startDate: Date } = resumeFrom(state, p.first, p.now());
  // A first poll: its startDate goes into the checkpoint, for a refused cursor to go back to.
  const firstStart = 'startDate' in from ? from.startDate : undefined;
  if (firstStart !== undefined) announceFirstPoll(p, projectId, firstStart);
  let fellBack = false;
  for (;;) {
    // True while the next request carries a cursor (the stored one, or a page's).
    let onCursor = 'cursor' in from;
    try {
      for await (const page of client.votes.pages(from, segment, { signal: p.aborter.signal })) {
        result.pages += 1;
        const { votes, refused } = votesOfPage(page, projectId, p.now());
        if (refused.length > 0) refuseRecords(p, projectId, refused, result);
        if (votes.length > 0) {
          const outcome = await pipeline.ingest(votes, 'poll');
          result.accepted += outcome.accepted.length;
          result.duplicates += outcome.duplicates;
        }
        // Only now, with every vote of the page durably pending, does the cursor move past them.
        const next = advanceCursorState(state, { cursor: page.cursor, votes, ...(firstStart ? { startDate: firstStart } : {}) });
        await saveState(p, key, state, next, votes.length > 0);
        state = next;
        onCursor = true;
        if (p.stopping) return;
      }
      return;
    } catch (error) {
      if (!(error instanceof BadRequestError) || !onCursor || fellBack) throw error;
      fellBack = true;
      result.fellBack.push(projectId);
      from = { startDate: fellBackFrom(p, projectId, state, error) };
    }
  }
}

/** Counts and logs the records of a page that are not taken (one line per reason per 10 s, then a summary). */
function refuseRecords(p: PollerState, projectId: string, refused: readonly InvalidVoteRecord[], result: PollResult): void {
  result.refused += refused.length;
  for (const record of refused) {
    const fields = { project: projectId, field: record.field, index: record.index, problem: record.message };
    const message =
      `vote from the votes cursor refused: ${record.message}; ` + 'the other votes of its page are taken, and the cursor moves past it';
    p.refusals.refused(record.reason, undefined, fields, message);
  }
}

/** Logs a project's first poll once (see {@link logFirstStart}). */
function announceFirstPoll(p: PollerState, projectId: string, startDate: Date): void {
  if (p.announcedFirst.has(projectId)) return;
  p.announcedFirst.add(projectId);
  const { store, settingName } = p.options;
  // The state directory as configured (`./state`); a store with none (Redis, memory) says what it is.
  const place = store.writeHealth?.directory ?? store.describe();
  logFirstStart(p.logger, { projectId, startDate, lookbackMs: p.first.lookbackMs, place, ...(settingName ? { settingName } : {}) });
}

/** A refused cursor: lists again from the newest vote already seen (logged at warn once per project). */
function fellBackFrom(p: PollerState, projectId: string, state: CursorState | undefined, error: BadRequestError): Date {
  const startDate = fallbackStartDate(state, p.now());
  const fields = { project: projectId, startDate: startDate.toISOString(), newestKey: state?.newestKey ?? null, err: error.message };
  const message =
    'the service refused the votes cursor (expired or invalid); listing again from the newest vote already seen ' +
    '(repeats are dropped as duplicates)';
  if (p.warnedFallback.has(projectId)) p.logger.debug(fields, message);
  else p.logger.warn(fields, message);
  p.warnedFallback.add(projectId);
  return startDate;
}

async function doPoll(p: PollerState): Promise<PollResult> {
  const result: PollResult = { projects: [], pages: 0, accepted: 0, duplicates: 0, refused: 0, fellBack: [], failures: [] };
  let list: string[];
  try {
    list = await targets(p);
  } catch (error) {
    result.failures.push({ project: 'projects', error: toError(error) });
    return finish(p, result);
  }
  for (const target of list) {
    if (p.stopping) break;
    try {
      await pollProject(p, target, result);
    } catch (error) {
      result.failures.push({ project: target === OWN_PROJECT ? (p.ownProjectId ?? target) : target, error: toError(error) });
    }
  }
  return finish(p, result);
}

function finish(p: PollerState, result: PollResult): PollResult {
  if (p.stopping && p.aborter.signal.aborted) return result;
  const readiness = pollReadiness(result, p.pollIntervalMs);
  mark(p, readiness.ready, readiness.detail);
  if (result.failures.length > 0) {
    for (const failure of result.failures) {
      const fields = { project: failure.project, err: failure.error.message, retryInMs: p.pollIntervalMs };
      p.logger.warn(fields, 'votes poll failed; the cursor stays where it was and the next poll retries');
      p.reportError(failure.error);
    }
  } else {
    p.options.metrics?.markSuccess(VOTES_COMPONENT, p.now());
  }
  const counts = { projects: result.projects.length, pages: result.pages, accepted: result.accepted, duplicates: result.duplicates };
  const fields = result.refused > 0 ? { ...counts, refused: result.refused } : counts;
  if (result.accepted > 0) p.logger.info(fields, 'new votes from the cursor');
  else p.logger.debug(fields, 'votes poll done');
  return result;
}

function poll(p: PollerState): Promise<PollResult> {
  p.polling ??= doPoll(p).finally(() => (p.polling = undefined));
  return p.polling;
}

function start(p: PollerState): void {
  p.stopping = false;
  p.aborter = new AbortController();
  mark(p, false, 'first poll of the votes cursor');
  p.schedule = (p.options.schedules ?? createSchedule)({
    name: 'votes-poll',
    intervalMs: p.pollIntervalMs,
    onTick: async () => {
      await poll(p);
    },
    onError: p.reportError,
  });
  p.schedule.start();
  void poll(p);
}

async function stop(p: PollerState, deadline: number): Promise<void> {
  p.stopping = true;
  p.schedule?.stop();
  p.schedule = undefined;
  p.refusals.flush();
  const running = p.polling;
  if (!running) return;
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timerDelay(deadline - p.now()));
    timer.unref();
  });
  const outcome = await Promise.race([running.then(() => 'done' as const), timedOut]);
  clearTimeout(timer);
  if (outcome === 'timeout') {
    // Cut the request short; the checkpoint stays at the last page fully ingested.
    p.aborter.abort(new Error('the votes poller is stopping'));
    // The aborted request settles at once; an ingest cannot be cut, so do not wait for it long.
    await Promise.race([running, new Promise((resolve) => setTimeout(resolve, 1_000).unref())]);
  }
}
