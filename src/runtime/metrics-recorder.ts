import type { Readiness } from './readiness.js';
import { labeledCounter, labeledGauge, type LabeledCounter, type LabeledGauge, type LabeledSeries } from './labeled.js';
import { WRITE_PROBLEMS, type WriteHealth, type WriteProblem } from '../store/write-health.js';

/*
 * The agent's metrics as values in memory, without prom-client. Every agent records them; a
 * prom-client registry (runtime/metrics.ts) reads them at each scrape once something serves them:
 * the health server's `/metrics`, a `registry` the bot passed, or `agent.registry` read. An agent
 * posting stats with health off so never loads prom-client (issue 25).
 */

export const POST_TARGETS = ['v1', 'v1_batch', 'v0'] as const;
export const POST_RESULTS = ['ok', 'error', 'skipped'] as const;
export const VOTE_ROADS = ['poll', 'webhook'] as const;
export const HOOK_RESULTS = ['ok', 'error', 'dead_letter'] as const;
/**
 * What became of a webhook delivery: `accepted` (verified and recorded, or a test or integration
 * event handled), `duplicate` (a vote already recorded, answered 2xx), `bad_signature` (no, a
 * malformed or a wrong signature or v0 `Authorization`), `stale` (outside the clock tolerance),
 * `malformed` (not an event under a valid signature), `too_large` (413), `rejected` (wrong path or
 * method, a body that never arrived), `error` (not recorded: 503 so the service retries).
 */
export const DELIVERY_OUTCOMES = [
  'accepted',
  'duplicate',
  'bad_signature',
  'stale',
  'malformed',
  'too_large',
  'rejected',
  'error',
] as const;
export const SYNC_RESULTS = ['synced', 'unchanged', 'error'] as const;
/**
 * What became of a vote reminder, once per reminder: scheduled; `sent` (its hooks took it); `skipped` (superseded, late); a hook gave
 * up (`failed`).
 */
export const REMINDER_RESULTS = ['scheduled', 'sent', 'skipped', 'failed'] as const;

/** Labels of `listing_agent_posts_total`: which endpoint the counts went to, and how it went. */
export type PostsLabels = {
  target: (typeof POST_TARGETS)[number];
  result: (typeof POST_RESULTS)[number];
};
/** Labels of `listing_agent_votes_received_total`: the road a vote came by. */
export type VotesReceivedLabels = {
  road: (typeof VOTE_ROADS)[number];
};
/** Labels of `listing_agent_hook_runs_total`. */
export type HookRunsLabels = {
  /** A short, stable hook name (its index or host): never its URL, which may carry a secret. */
  hook: string;
  result: (typeof HOOK_RESULTS)[number];
};
/** Labels of `listing_agent_webhook_deliveries_total`. */
export type WebhookDeliveriesLabels = {
  outcome: (typeof DELIVERY_OUTCOMES)[number];
};
/** Labels of `listing_agent_command_syncs_total`. */
export type CommandSyncsLabels = {
  result: (typeof SYNC_RESULTS)[number];
};

/** The agent's Prometheus metrics, all named `listing_agent_*`. */
export interface AgentMetrics {
  /** `listing_agent_posts_total{target, result}`: stats posts. */
  posts: LabeledCounter<PostsLabels>;
  /** `listing_agent_votes_received_total{road}`: votes seen, before dedupe. */
  votesReceived: LabeledCounter<VotesReceivedLabels>;
  /** `listing_agent_hook_runs_total{hook, result}`: reward hook calls. */
  hookRuns: LabeledCounter<HookRunsLabels>;
  /** `listing_agent_reminders_total{result}`: vote reminders scheduled, sent, skipped and failed. */
  reminders: LabeledCounter<{ result: (typeof REMINDER_RESULTS)[number] }>;
  /** `listing_agent_webhook_deliveries_total{outcome}`: webhook deliveries received (v1 signed and legacy v0). */
  webhookDeliveries: LabeledCounter<WebhookDeliveriesLabels>;
  /** `listing_agent_command_syncs_total{result}`: command sync runs. */
  commandSyncs: LabeledCounter<CommandSyncsLabels>;
  /** `listing_agent_last_success_timestamp_seconds{capability}`: set by {@link AgentMetrics.markSuccess}. */
  lastSuccess: LabeledGauge<{ capability: string }>;
  /** Records that `capability` last succeeded at `nowMs` (epoch ms). */
  markSuccess(capability: string, nowMs: number): void;
  /**
   * Sets `listing_agent_ready`. Only for metrics made without a readiness: with one, the gauge is
   * read from it at every scrape and this value is overwritten.
   */
  setReady(ready: boolean): void;
  /**
   * Adds the gauges of an agent sharing its work through Redis, read from `read` at every scrape:
   * `listing_agent_redis_up` (1 connected, 0 not) and `listing_agent_leader{agent}` (1 while this
   * agent holds the leader lease, else 0; `agent` is its `state.redis.agentId`). An agent without
   * Redis never calls it, so it shows neither. Calling it twice throws (one agent, one Redis).
   */
  watchCluster(read: () => ClusterStatus): void;
  /**
   * Sets `listing_agent_stats_interval_seconds`: the longest expected time between two regular
   * stats posts (what an alert on the last post's age compares with). The gauge appears on the
   * first call, so an agent that never posts stats does not show it.
   */
  setStatsInterval(seconds: number): void;
  /**
   * Adds `listing_agent_votes_pending` and `listing_agent_votes_dead_letters`, read from `read` at
   * every scrape (the vote ledger's sizes; undefined keeps the last values, e.g. while the ledger
   * is closed). A second call replaces the reader: the votes capability calls it at each start.
   */
  watchVoteLedger(read: () => VoteLedgerSizes | undefined): void;
  /**
   * Adds `listing_agent_state_writable` (1 while the state directory takes writes, 0 while a full
   * disk, a read-only file system or another failure refuses them; `/readyz` says which) and
   * `listing_agent_state_write_errors_total{problem}` (failed writes and probes: `no_space`,
   * `read_only`, `denied`, `other`), both appearing at the first call. The agent calls it for its
   * file store, the votes capability for its file ledger (the same health when they share a
   * directory: counted once). Returns the removal (a ledger that closes).
   */
  watchStateWrites(health: WriteHealth): () => void;
  /**
   * Adds `listing_agent_push_reports_unshared`, read from `read` at every scrape: shard reports
   * the bot pushed to this agent that are not in Redis yet (several agents with the push source;
   * undefined keeps the last value). A second call replaces the reader: the push endpoint calls it
   * at each start. An agent without it does not show the gauge.
   */
  watchPushShare(read: () => number | undefined): void;
}

/** What {@link AgentMetrics.watchVoteLedger} reads at each scrape. */
export interface VoteLedgerSizes {
  /** Votes whose hooks have not all succeeded or been given up yet. */
  pending: number;
  /** Hook calls given up after their last retry, waiting for a replay (`listing-agent votes`). */
  deadLetters: number;
}

/** What {@link AgentMetrics.watchCluster} reads at each scrape. */
export interface ClusterStatus {
  /** Whether the Redis connection is up. */
  redisUp: boolean;
  /** This agent's ID (the `agent` label). */
  agentId: string;
  /** Whether this agent holds the leader lease now. */
  leading: boolean;
}

/** The metrics that appear only once used: a registry registers each at its first use. */
export type LaterMetric = 'statsInterval' | 'voteLedger' | 'pushShare' | 'cluster' | 'stateWrites';

/** What a registry reads from {@link MetricsRecorder} at each scrape (runtime/metrics.ts). */
export interface RecordedMetrics {
  readonly readiness: Readiness | undefined;
  /** The counters, each with its known series at 0 from the start. */
  readonly counters: readonly LabeledSeries[];
  readonly lastSuccess: LabeledSeries;
  /** `listing_agent_ready` as {@link AgentMetrics.setReady} set it (without a readiness). */
  readonly ready: number;
  readonly statsInterval: number | undefined;
  readonly voteLedger: (() => VoteLedgerSizes | undefined) | undefined;
  readonly pushShare: (() => number | undefined) | undefined;
  readonly cluster: (() => ClusterStatus) | undefined;
  /** Whether every watched state directory takes writes. */
  stateWritable(): boolean;
  readonly stateWriteErrors: LabeledSeries;
  /** The metrics used so far among the later ones. */
  readonly appeared: ReadonlySet<LaterMetric>;
  /** Calls `listener` when one of the later metrics is first used; returns the removal. */
  onAppear(listener: (metric: LaterMetric) => void): () => void;
}

/** The agent's metrics and what a registry reads of them. */
export interface MetricsRecorder extends AgentMetrics {
  readonly recorded: RecordedMetrics;
}

/** {@link AgentMetrics.watchStateWrites}: each watched health once, with its watchers (the store and the ledger share one). */
function stateWritesWatcher(count: LabeledCounter<{ problem: WriteProblem }>, watched: Set<WriteHealth>): AgentMetrics['watchStateWrites'] {
  const watchers = new Map<WriteHealth, { watchers: number; unlisten: () => void }>();
  return (health) => {
    const known = watchers.get(health);
    if (known) known.watchers += 1;
    else watchers.set(health, { watchers: 1, unlisten: health.onFailure((problem) => count.inc({ problem })) });
    watched.add(health);
    let removed = false;
    return () => {
      const entry = watchers.get(health);
      if (removed || !entry) return;
      removed = true;
      entry.watchers -= 1;
      if (entry.watchers > 0) return;
      entry.unlisten();
      watchers.delete(health);
      watched.delete(health);
    };
  };
}

function counters() {
  return {
    posts: labeledCounter<PostsLabels>({
      name: 'listing_agent_posts_total',
      help: 'Stats posts by target endpoint (v1, v1_batch, v0) and result (ok, error, skipped).',
      known: { target: POST_TARGETS, result: POST_RESULTS },
    }),
    votesReceived: labeledCounter<VotesReceivedLabels>({
      name: 'listing_agent_votes_received_total',
      help: 'Votes received by road (poll: the votes cursor; webhook: signed deliveries), before dedupe.',
      known: { road: VOTE_ROADS },
    }),
    hookRuns: labeledCounter<HookRunsLabels>({
      name: 'listing_agent_hook_runs_total',
      help: 'Reward hook calls by hook and result (ok, error, dead_letter: given up after the last retry).',
      known: { hook: [], result: HOOK_RESULTS },
    }),
    reminders: labeledCounter<{ result: (typeof REMINDER_RESULTS)[number] }>({
      name: 'listing_agent_reminders_total',
      help: 'Vote reminders by result (scheduled; sent: every hook took it, counted once per reminder; skipped: superseded by a newer ' +
        'vote or later than maxLateness; failed: a hook gave up).',
      known: { result: REMINDER_RESULTS },
    }),
    webhookDeliveries: labeledCounter<WebhookDeliveriesLabels>({
      name: 'listing_agent_webhook_deliveries_total',
      help: 'Webhook deliveries by outcome (accepted, duplicate, bad_signature, stale, malformed, too_large, rejected: wrong path or ' +
        'method or a body that never came, error: not recorded, answered 503).',
      known: { outcome: DELIVERY_OUTCOMES },
    }),
    commandSyncs: labeledCounter<CommandSyncsLabels>({
      name: 'listing_agent_command_syncs_total',
      help: 'Command sync runs by result (synced, unchanged: skipped because the hash matched, error).',
      known: { result: SYNC_RESULTS },
    }),
  };
}

/**
 * The agent's metrics, in memory (see above). `readiness`, when given, is what
 * `listing_agent_ready` and `listing_agent_component_ready` read at each scrape.
 */
export function createMetricsRecorder(readiness?: Readiness): MetricsRecorder {
  const counted = counters();
  const lastSuccess = labeledGauge<{ capability: string }>({
    name: 'listing_agent_last_success_timestamp_seconds',
    help: 'Unix time of the last success of each capability (alert when it grows old).',
    known: { capability: [] },
  });
  const writeErrors = labeledCounter<{ problem: WriteProblem }>({
    name: 'listing_agent_state_write_errors_total',
    help: 'Failed writes (and probes) in the state directory by problem (no_space, read_only, denied, other).',
    known: { problem: WRITE_PROBLEMS },
  });
  const watchedWrites = new Set<WriteHealth>();
  const listeners = new Set<(metric: LaterMetric) => void>();
  const appeared = new Set<LaterMetric>();
  const appear = (metric: LaterMetric) => {
    if (appeared.has(metric)) return;
    appeared.add(metric);
    for (const listener of listeners) listener(metric);
  };
  const recorded = {
    readiness,
    counters: Object.values(counted).map((counter) => counter.described),
    lastSuccess: lastSuccess.described,
    ready: 0,
    statsInterval: undefined as number | undefined,
    voteLedger: undefined as RecordedMetrics['voteLedger'],
    pushShare: undefined as RecordedMetrics['pushShare'],
    cluster: undefined as RecordedMetrics['cluster'],
    stateWritable: () => [...watchedWrites].every((health) => health.writable),
    stateWriteErrors: writeErrors.described,
    appeared,
    onAppear(listener: (metric: LaterMetric) => void) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
  const watchWrites = stateWritesWatcher(writeErrors, watchedWrites);
  return {
    ...counted,
    lastSuccess,
    recorded,
    markSuccess: (capability, nowMs) => lastSuccess.set({ capability }, nowMs / 1000),
    setReady: (value) => {
      recorded.ready = value ? 1 : 0;
    },
    setStatsInterval(seconds) {
      recorded.statsInterval = seconds;
      appear('statsInterval');
    },
    watchVoteLedger(read) {
      recorded.voteLedger = read;
      appear('voteLedger');
    },
    watchPushShare(read) {
      recorded.pushShare = read;
      appear('pushShare');
    },
    watchCluster(read) {
      if (recorded.cluster) throw new Error('watchCluster was called twice: an agent has one Redis connection');
      recorded.cluster = read;
      appear('cluster');
    },
    watchStateWrites(health) {
      const remove = watchWrites(health);
      appear('stateWrites');
      return remove;
    },
  };
}
