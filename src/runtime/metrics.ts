import { collectDefaultMetrics, Gauge, type Registry } from 'prom-client';
import type { Readiness } from './readiness.js';
import { CLIENT_VERSION } from '../api/version.js';
import { labeledCounter, labeledGauge, type LabeledCounter, type LabeledGauge } from './labeled.js';
import { WRITE_PROBLEMS, type WriteHealth, type WriteProblem } from '../store/write-health.js';

const POST_TARGETS = ['v1', 'v1_batch', 'v0'] as const;
const POST_RESULTS = ['ok', 'error', 'skipped'] as const;
const VOTE_ROADS = ['poll', 'webhook'] as const;
const HOOK_RESULTS = ['ok', 'error', 'dead_letter'] as const;
/**
 * What became of a webhook delivery: `accepted` (verified and recorded, or a test or integration
 * event handled), `duplicate` (a vote already recorded, answered 2xx), `bad_signature` (no, a
 * malformed or a wrong signature or v0 `Authorization`), `stale` (outside the clock tolerance),
 * `malformed` (not an event under a valid signature), `too_large` (413), `rejected` (wrong path or
 * method, a body that never arrived), `error` (not recorded: 503 so the service retries).
 */
const DELIVERY_OUTCOMES = ['accepted', 'duplicate', 'bad_signature', 'stale', 'malformed', 'too_large', 'rejected', 'error'] as const;
const SYNC_RESULTS = ['synced', 'unchanged', 'error'] as const;
/** What became of a vote reminder, once per reminder: scheduled; `sent` (its hooks took it); `skipped` (superseded, late); a hook gave up (`failed`). */
const REMINDER_RESULTS = ['scheduled', 'sent', 'skipped', 'failed'] as const;

/** Labels of `listing_agent_posts_total`: which endpoint the counts went to, and how it went. */
type PostsLabels = {
  target: (typeof POST_TARGETS)[number];
  result: (typeof POST_RESULTS)[number];
};
/** Labels of `listing_agent_votes_received_total`: the road a vote came by. */
type VotesReceivedLabels = {
  road: (typeof VOTE_ROADS)[number];
};
/** Labels of `listing_agent_hook_runs_total`. */
type HookRunsLabels = {
  /** A short, stable hook name (its index or host): never its URL, which may carry a secret. */
  hook: string;
  result: (typeof HOOK_RESULTS)[number];
};
/** Labels of `listing_agent_webhook_deliveries_total`. */
export type WebhookDeliveriesLabels = {
  outcome: (typeof DELIVERY_OUTCOMES)[number];
};
/** Labels of `listing_agent_command_syncs_total`. */
type CommandSyncsLabels = {
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
interface ClusterStatus {
  /** Whether the Redis connection is up. */
  redisUp: boolean;
  /** This agent's ID (the `agent` label). */
  agentId: string;
  /** Whether this agent holds the leader lease now. */
  leading: boolean;
}

/** `listing_agent_ready`, `listing_agent_component_ready` (read from `readiness` at each scrape) and `listing_agent_info`. */
function registerStatusGauges(registry: Registry, readiness: Readiness | undefined): Gauge {
  const ready = new Gauge({
    name: 'listing_agent_ready',
    help: '1 when the agent reached the service and every enabled capability is running, else 0 (see /readyz for why).',
    registers: [registry],
    collect() {
      if (readiness) this.set(readiness.snapshot().ready ? 1 : 0);
    },
  });
  new Gauge({
    name: 'listing_agent_component_ready',
    help: 'Readiness of each component (service, store, and each capability): 1 ready, 0 not.',
    labelNames: ['component'],
    registers: [registry],
    collect() {
      if (!readiness) return;
      // Reset first: a component that was removed must not linger with its last value.
      this.reset();
      for (const [component, state] of Object.entries(readiness.snapshot().components)) this.set({ component }, state.ready ? 1 : 0);
    },
  });
  new Gauge({
    name: 'listing_agent_info',
    help: 'Always 1; the version label says which listing-agent runs.',
    labelNames: ['version'],
    registers: [registry],
  }).set({ version: CLIENT_VERSION }, 1);
  return ready;
}

/** See {@link AgentMetrics.watchCluster}. */
function registerClusterGauges(registry: Registry, read: () => ClusterStatus): void {
  new Gauge({
    name: 'listing_agent_redis_up',
    help: '1 while the connection to Redis (state.redis) is up, else 0: webhook votes are then answered 503 and leader work stops.',
    registers: [registry],
    collect() {
      this.set(read().redisUp ? 1 : 0);
    },
  });
  new Gauge({
    name: 'listing_agent_leader',
    help: '1 while this agent holds the leader lease (it posts stats, syncs commands, polls votes), else 0. Label agent: this agent\'s ID.',
    labelNames: ['agent'],
    registers: [registry],
    collect() {
      const status = read();
      // Reset first: one series, under the current ID.
      this.reset();
      this.set({ agent: status.agentId }, status.leading ? 1 : 0);
    },
  });
}

/** See {@link AgentMetrics.watchVoteLedger}: registered once, reading whatever `read` answers at each scrape. */
function registerLedgerGauges(registry: Registry, read: () => VoteLedgerSizes | undefined): void {
  new Gauge({
    name: 'listing_agent_votes_pending',
    help: 'Votes whose reward hooks have not all succeeded or been given up yet (with state.redis: every agent\'s).',
    registers: [registry],
    collect() {
      const sizes = read();
      if (sizes) this.set(sizes.pending);
    },
  });
  new Gauge({
    name: 'listing_agent_votes_dead_letters',
    help: 'Reward hook calls given up after their last retry, waiting for a replay (listing-agent votes failed lists them, votes retry replays them); alert when above 0.',
    registers: [registry],
    collect() {
      const sizes = read();
      if (sizes) this.set(sizes.deadLetters);
    },
  });
}

/** See {@link AgentMetrics.watchStateWrites}: registered once, reading every watched health at each scrape. */
function registerStateWriteMetrics(registry: Registry, watched: ReadonlySet<WriteHealth>): LabeledCounter<{ problem: WriteProblem }> {
  new Gauge({
    name: 'listing_agent_state_writable',
    help: '1 while the state directory takes writes, 0 while it does not (a full disk, a read-only file system: /readyz says which); new votes are refused meanwhile.',
    registers: [registry],
    collect() {
      this.set([...watched].every((health) => health.writable) ? 1 : 0);
    },
  });
  return labeledCounter<{ problem: WriteProblem }>(registry, {
    name: 'listing_agent_state_write_errors_total',
    help: 'Failed writes (and probes) in the state directory by problem (no_space, read_only, denied, other).',
    known: { problem: WRITE_PROBLEMS },
  });
}

/** {@link AgentMetrics.watchStateWrites} of one registry: the metrics made at the first call. */
function stateWritesWatcher(registry: Registry): AgentMetrics['watchStateWrites'] {
  /** Each watched health with its watchers (the store and the ledger share one) and its failure listener's removal. */
  const writeHealths = new Map<WriteHealth, { watchers: number; unlisten: () => void }>();
  const watchedHealths = new Set<WriteHealth>();
  let writeErrors: LabeledCounter<{ problem: WriteProblem }> | undefined;
  return (health) => {
    const errors = (writeErrors ??= registerStateWriteMetrics(registry, watchedHealths));
    const known = writeHealths.get(health);
    if (known) known.watchers += 1;
    else writeHealths.set(health, { watchers: 1, unlisten: health.onFailure((problem) => errors.inc({ problem })) });
    watchedHealths.add(health);
    let removed = false;
    return () => {
      const entry = writeHealths.get(health);
      if (removed || !entry) return;
      removed = true;
      entry.watchers -= 1;
      if (entry.watchers > 0) return;
      entry.unlisten();
      writeHealths.delete(health);
      watchedHealths.delete(health);
    };
  };
}

/**
 * Creates the agent's metrics on `registry`, never on prom-client's global registry, so that
 * several agents can live in one process.
 *
 * @param registry Where the metrics are registered. Creating them twice on one registry throws.
 * @param readiness When given, `listing_agent_ready` (1/0) and
 *   `listing_agent_component_ready{component}` are read from it at each scrape. Default: none
 *   (`listing_agent_ready` then follows {@link AgentMetrics.setReady}, and stays 0 until called).
 */
export function createAgentMetrics(registry: Registry, readiness?: Readiness): AgentMetrics {
  const ready = registerStatusGauges(registry, readiness);
  const lastSuccess = labeledGauge<{ capability: string }>(registry, {
    name: 'listing_agent_last_success_timestamp_seconds',
    help: 'Unix time of the last success of each capability (alert when it grows old).',
    known: { capability: [] },
  });

  const statsInterval = lazyGauge(registry, {
    name: 'listing_agent_stats_interval_seconds',
    help: 'The longest expected time between two regular stats posts: stats.interval, or the longest gap between the matches of stats.schedule in the coming week, plus stats.jitter.',
  });
  let readLedger: (() => VoteLedgerSizes | undefined) | undefined;
  let readPushShare: (() => number | undefined) | undefined;

  return {
    posts: labeledCounter<PostsLabels>(registry, {
      name: 'listing_agent_posts_total',
      help: 'Stats posts by target endpoint (v1, v1_batch, v0) and result (ok, error, skipped).',
      known: { target: POST_TARGETS, result: POST_RESULTS },
    }),
    votesReceived: labeledCounter<VotesReceivedLabels>(registry, {
      name: 'listing_agent_votes_received_total',
      help: 'Votes received by road (poll: the votes cursor; webhook: signed deliveries), before dedupe.',
      known: { road: VOTE_ROADS },
    }),
    hookRuns: labeledCounter<HookRunsLabels>(registry, {
      name: 'listing_agent_hook_runs_total',
      help: 'Reward hook calls by hook and result (ok, error, dead_letter: given up after the last retry).',
      known: { hook: [], result: HOOK_RESULTS },
    }),
    reminders: labeledCounter<{ result: (typeof REMINDER_RESULTS)[number] }>(registry, {
      name: 'listing_agent_reminders_total',
      help: 'Vote reminders by result (scheduled; sent: every hook took it, counted once per reminder; skipped: superseded by a newer vote or later than maxLateness; failed: a hook gave up).',
      known: { result: REMINDER_RESULTS },
    }),
    webhookDeliveries: labeledCounter<WebhookDeliveriesLabels>(registry, {
      name: 'listing_agent_webhook_deliveries_total',
      help:
        'Webhook deliveries by outcome (accepted, duplicate, bad_signature, stale, malformed, too_large, rejected: wrong path or method or a body that never came, error: not recorded, answered 503).',
      known: { outcome: DELIVERY_OUTCOMES },
    }),
    commandSyncs: labeledCounter<CommandSyncsLabels>(registry, {
      name: 'listing_agent_command_syncs_total',
      help: 'Command sync runs by result (synced, unchanged: skipped because the hash matched, error).',
      known: { result: SYNC_RESULTS },
    }),
    lastSuccess,
    markSuccess: (capability, nowMs) => lastSuccess.set({ capability }, nowMs / 1000),
    setReady: (value) => ready.set(value ? 1 : 0),
    setStatsInterval: (seconds) => statsInterval().set(seconds),
    watchVoteLedger(read) {
      if (readLedger === undefined) registerLedgerGauges(registry, () => readLedger?.());
      readLedger = read;
    },
    watchPushShare(read) {
      if (readPushShare === undefined) {
        new Gauge({
          name: 'listing_agent_push_reports_unshared',
          help: 'Shard reports the bot pushed to this agent that are not in Redis yet (Redis unreachable: held, written when it returns); alert when above 0 for long.',
          registers: [registry],
          collect() {
            const count = readPushShare?.();
            if (count !== undefined) this.set(count);
          },
        });
      }
      readPushShare = read;
    },
    watchCluster: (read) => registerClusterGauges(registry, read),
    watchStateWrites: stateWritesWatcher(registry),
  };
}

/** A gauge without labels, registered on its first use (an unlabeled gauge shows 0 from its start). */
function lazyGauge(registry: Registry, config: { name: string; help: string }): () => Gauge {
  let gauge: Gauge | undefined;
  return () => (gauge ??= new Gauge({ ...config, registers: [registry] }));
}

const collecting = new WeakSet<Registry>();

/**
 * Adds prom-client's process metrics (`process_*`, `nodejs_*`: CPU, memory, event loop lag, GC)
 * to `registry`. The daemon does; embedded agents do not by default, since the bot may export its
 * own. Calling it twice for one registry does nothing the second time.
 */
export function collectProcessMetrics(registry: Registry): void {
  if (collecting.has(registry)) return;
  collectDefaultMetrics({ register: registry });
  collecting.add(registry);
}
