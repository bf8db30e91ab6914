/**
 * The status page's memory: what the agent's events said, kept bounded (a window of
 * `historyMs`, and at most so many entries of each kind). The agent feeds it (the composition
 * layer subscribes it to its events); the inputs are declared here by shape, so that this
 * capability imports none of the others (a hook run's shape is the runtime's `HookRun`).
 */

import type { HookRun } from '../runtime/votes.js';

/** What a `posted` event carries, as far as the page reads it. */
interface PostedInput {
  target: string;
  samples: readonly { timestamp: string; serverCount: number; shardCount: number }[];
  nextPostAt?: number;
  afterFailures?: number;
}

/** What a `postFailed` event carries. */
interface PostFailedInput {
  target: string;
  error: Error;
  pendingSamples: number;
  retryAt: number;
}

/** What a `commandsSynced` event carries. */
interface CommandsSyncedInput {
  count: number;
  skipped: boolean;
  hash: string;
  reason: string;
  diff: { added: readonly string[]; removed: readonly string[]; changed: readonly { key: string }[] };
}

/** What a `voteReceived` event carries. */
interface VoteInput {
  key: string;
  userId: string;
  platformId: string | null;
  road: string;
  createdAt: string;
  user?: { name: string | null };
}

/** A sample of the counts, epoch ms. */
interface CollectedSample {
  at: number;
  servers: number;
  shards: number;
}

/** A post, epoch ms. */
interface CollectedPost {
  at: number;
  target: string;
  outcome: 'ok' | 'retried' | 'failed';
  servers: number | null;
  shards: number | null;
  samples: number;
  error: string | null;
  retryAt: number | null;
}

/** A hook's latest outcome for a vote. */
interface CollectedHook {
  hook: string;
  outcome: 'ok' | 'retrying' | 'dead_letter';
  attempts: number;
  latencyMs: number;
  error: string | null;
}

/** A vote received, epoch ms. */
interface CollectedVote {
  key: string;
  userId: string;
  platformId: string | null;
  name: string | null;
  source: string;
  createdAt: string;
  receivedAt: number;
  hooks: CollectedHook[];
}

/** Everything collected, as {@link StatusCollector.collected} hands it out (copies). */
export interface CollectedStatus {
  /** Oldest first. */
  samples: CollectedSample[];
  /** Oldest first. */
  posts: CollectedPost[];
  nextPostAt: number | null;
  /** Samples kept after the newest failure, when it is newer than the newest success. */
  pendingSamples: number | null;
  lastSync: (Omit<CommandsSyncedInput, 'diff'> & { at: number; added: string[]; removed: string[]; changed: string[] }) | null;
  lastSyncFailure: { at: number; error: string } | null;
  /** Newest first. */
  votes: CollectedVote[];
  /** Hours (epoch ms of the hour's start) with votes, oldest first. */
  votesPerHour: { hour: number; poll: number; webhook: number }[];
  /** The delivery counts to subtract for "the last hour", and when they were read. */
  deliveryBaseline: { at: number; counts: Record<string, number> } | null;
  cursorMovedAt: number | null;
  /** Newest first. */
  errors: { at: number; message: string }[];
}

/** Options of {@link createStatusCollector}. */
export interface StatusCollectorOptions {
  /** Epoch ms. */
  now: () => number;
  /** How far back samples, posts and votes per hour are kept. Default 24 h. */
  historyMs?: number;
  /** Samples kept at most (the oldest half is thinned past it). Default 4 000. */
  maxSamples?: number;
  /** Posts kept at most. Default 1 000. */
  maxPosts?: number;
  /** Votes listed. Default 50. */
  recentVotes?: number;
  /** Errors listed. Default 10. */
  recentErrors?: number;
}

/** The collector: one method per event it hears, and what it kept. */
export interface StatusCollector {
  posted(result: PostedInput): void;
  postFailed(failure: PostFailedInput): void;
  commandsSynced(result: CommandsSyncedInput): void;
  commandsSyncFailed(failure: { error: Error }): void;
  voteReceived(vote: VoteInput): void;
  hookRan(run: HookRun): void;
  error(error: Error): void;
  /** A reading of the cumulative delivery counters (taken every minute): the base of "the last hour". */
  deliveries(counts: Record<string, number>): void;
  /** The stored cursor as read now: when it differs from the last reading, it moved now. */
  cursor(position: string | null): void;
  collected(): CollectedStatus;
}

const HOUR_MS = 3_600_000;

/** Drops every other entry of the oldest half until at most `max` are left (the newest half stays whole). */
export function thinOldest<T>(entries: T[], max: number): T[] {
  let result = entries;
  while (result.length > max) {
    const half = Math.floor(result.length / 2);
    result = [...result.slice(0, half).filter((_, index) => index % 2 === 0), ...result.slice(half)];
  }
  return result;
}

/** What a collector holds, changed in place by the `record*` functions below. */
interface CollectorState {
  samples: CollectedSample[];
  posts: CollectedPost[];
  nextPostAt: number | null;
  pendingSamples: number | null;
  lastSync: CollectedStatus['lastSync'];
  lastSyncFailure: CollectedStatus['lastSyncFailure'];
  votes: CollectedVote[];
  votesPerHour: Map<number, { poll: number; webhook: number }>;
  deliveryReadings: { at: number; counts: Record<string, number> }[];
  /** Undefined until the first reading. */
  cursorPosition: string | null | undefined;
  cursorMovedAt: number | null;
  errors: CollectedStatus['errors'];
}

type Bounds = Required<Omit<StatusCollectorOptions, 'now'>>;

function addSample(state: CollectorState, sample: CollectedSample): void {
  const { samples } = state;
  // Posts come in time order, so the place is almost always the end; v1 and v0 post the same sample.
  let index = samples.length;
  while (index > 0 && samples[index - 1]!.at > sample.at) index -= 1;
  if (index > 0 && samples[index - 1]!.at === sample.at) samples[index - 1] = sample;
  else samples.splice(index, 0, sample);
}

/** Drops the samples and posts older than the window, and thins the samples past their cap. */
function pruneStats(state: CollectorState, now: number, bounds: Bounds): void {
  const cutoff = now - bounds.historyMs;
  state.samples = thinOldest(state.samples.filter((s) => s.at >= cutoff), bounds.maxSamples);
  state.posts = state.posts.filter((p) => p.at >= cutoff).slice(-bounds.maxPosts);
}

/** Drops the hours of votes older than the window. */
function pruneHours(state: CollectorState, now: number, bounds: Bounds): void {
  const cutoff = now - bounds.historyMs;
  for (const hour of state.votesPerHour.keys()) if (hour + HOUR_MS <= cutoff) state.votesPerHour.delete(hour);
}

function recordPosted(state: CollectorState, result: PostedInput, at: number): void {
  for (const s of result.samples) {
    const sampledAt = Date.parse(s.timestamp);
    if (Number.isFinite(sampledAt)) addSample(state, { at: sampledAt, servers: s.serverCount, shards: s.shardCount });
  }
  const newest = result.samples.at(-1);
  const outcome = (result.afterFailures ?? 0) > 0 ? 'retried' : 'ok';
  state.posts.push({
    at,
    target: result.target,
    outcome,
    servers: newest?.serverCount ?? null,
    shards: newest?.shardCount ?? null,
    samples: result.samples.length,
    error: null,
    retryAt: null,
  });
  state.nextPostAt = result.nextPostAt ?? null;
  state.pendingSamples = null;
}

function recordVote(state: CollectorState, vote: VoteInput, at: number, bounds: Bounds): void {
  // Called for every vote (thousands a second at worst): no copy of the list, no pass over the history.
  state.votes.unshift({
    key: vote.key,
    userId: vote.userId,
    platformId: vote.platformId,
    name: vote.user?.name ?? null,
    source: vote.road,
    createdAt: vote.createdAt,
    receivedAt: at,
    hooks: [],
  });
  if (state.votes.length > bounds.recentVotes) state.votes.length = bounds.recentVotes;
  const hour = Math.floor(at / HOUR_MS) * HOUR_MS;
  let counts = state.votesPerHour.get(hour);
  if (counts === undefined) {
    // A new hour (once an hour at most): the oldest goes, even if nobody looks at the page.
    state.votesPerHour.set(hour, (counts = { poll: 0, webhook: 0 }));
    pruneHours(state, at, bounds);
  }
  if (vote.road === 'webhook') counts.webhook += 1;
  else counts.poll += 1;
}

function recordHookRun(state: CollectorState, run: HookRun): void {
  const vote = state.votes.find((v) => v.key === run.key);
  if (vote === undefined) return;
  const outcome: CollectedHook = {
    hook: run.hook,
    outcome: run.result === 'ok' ? 'ok' : run.result === 'error' ? 'retrying' : 'dead_letter',
    attempts: run.attempt,
    latencyMs: run.durationMs,
    error: run.error ?? null,
  };
  const index = vote.hooks.findIndex((h) => h.hook === run.hook);
  if (index >= 0) vote.hooks[index] = outcome;
  else vote.hooks.push(outcome);
}

function recordDeliveries(state: CollectorState, counts: Record<string, number>, at: number): void {
  state.deliveryReadings.push({ at, counts: { ...counts } });
  // Keep the newest reading at least an hour old (the base) and every one after it.
  const base = state.deliveryReadings.findLastIndex((r) => r.at <= at - HOUR_MS);
  if (base > 0) state.deliveryReadings = state.deliveryReadings.slice(base);
}

/** Copies of what `state` holds. */
function snapshot(state: CollectorState): CollectedStatus {
  const base = state.deliveryReadings[0];
  return {
    samples: state.samples.map((s) => ({ ...s })),
    posts: state.posts.map((p) => ({ ...p })),
    nextPostAt: state.nextPostAt,
    pendingSamples: state.pendingSamples,
    lastSync: state.lastSync === null ? null : { ...state.lastSync },
    lastSyncFailure: state.lastSyncFailure,
    votes: state.votes.map((v) => ({ ...v, hooks: v.hooks.map((h) => ({ ...h })) })),
    votesPerHour: [...state.votesPerHour].sort(([a], [b]) => a - b).map(([hour, c]) => ({ hour, ...c })),
    deliveryBaseline: base === undefined ? null : { at: base.at, counts: { ...base.counts } },
    cursorMovedAt: state.cursorMovedAt,
    errors: [...state.errors],
  };
}

/** Creates an empty collector. See {@link StatusCollectorOptions} for the bounds. */
export function createStatusCollector(options: StatusCollectorOptions): StatusCollector {
  const { now } = options;
  const bounds: Bounds = {
    historyMs: options.historyMs ?? 24 * HOUR_MS,
    maxSamples: options.maxSamples ?? 4_000,
    maxPosts: options.maxPosts ?? 1_000,
    recentVotes: options.recentVotes ?? 50,
    recentErrors: options.recentErrors ?? 10,
  };
  const state: CollectorState = {
    samples: [],
    posts: [],
    nextPostAt: null,
    pendingSamples: null,
    lastSync: null,
    lastSyncFailure: null,
    votes: [],
    votesPerHour: new Map(),
    deliveryReadings: [],
    cursorPosition: undefined,
    cursorMovedAt: null,
    errors: [],
  };
  return {
    posted(result) {
      recordPosted(state, result, now());
      pruneStats(state, now(), bounds);
    },
    postFailed(failure) {
      state.posts.push({
        at: now(),
        target: failure.target,
        outcome: 'failed',
        servers: null,
        shards: null,
        samples: 0,
        error: failure.error.message,
        retryAt: failure.retryAt,
      });
      state.nextPostAt = failure.retryAt;
      state.pendingSamples = failure.pendingSamples;
      pruneStats(state, now(), bounds);
    },
    commandsSynced({ diff, count, skipped, hash, reason }) {
      state.lastSync = {
        count,
        skipped,
        hash,
        reason,
        at: now(),
        added: [...diff.added],
        removed: [...diff.removed],
        changed: diff.changed.map((c) => c.key),
      };
      state.lastSyncFailure = null;
    },
    commandsSyncFailed(failure) {
      state.lastSyncFailure = { at: now(), error: failure.error.message };
    },
    voteReceived: (vote) => recordVote(state, vote, now(), bounds),
    hookRan: (run) => recordHookRun(state, run),
    error(error) {
      state.errors = [{ at: now(), message: error.message }, ...state.errors].slice(0, bounds.recentErrors);
    },
    deliveries: (counts) => recordDeliveries(state, counts, now()),
    cursor(position) {
      if (state.cursorPosition !== undefined && position !== state.cursorPosition) state.cursorMovedAt = now();
      state.cursorPosition = position;
    },
    collected() {
      pruneStats(state, now(), bounds);
      pruneHours(state, now(), bounds);
      return snapshot(state);
    },
  };
}
