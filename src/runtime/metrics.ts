import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import { CLIENT_VERSION } from '../api/version.js';
import type { LabeledSeries } from './labeled.js';
import { createMetricsRecorder, type AgentMetrics, type LaterMetric, type RecordedMetrics } from './metrics-recorder.js';
import type { Readiness } from './readiness.js';

export type { AgentMetrics, VoteLedgerSizes, WebhookDeliveriesLabels } from './metrics-recorder.js';

/*
 * The agent's metrics on a prom-client registry: what `/metrics` serves. The values live in
 * memory (metrics-recorder.ts, no prom-client); the registry reads them at each scrape. This
 * module, and prom-client with it, is loaded only when something serves them.
 */

type LabelValues = Partial<Record<string, string | number>>;

/** A metric's options whose series are read from `series` at each scrape, each written with `write`. */
function readAtScrape<M extends Counter<string> | Gauge<string>>(
  registry: Registry,
  series: LabeledSeries,
  write: (metric: M, labels: LabelValues, value: number) => void,
) {
  return {
    name: series.name,
    help: series.help,
    labelNames: [...series.labelNames],
    registers: [registry],
    collect(this: M) {
      this.reset();
      for (const { labels, value } of series.series()) write(this, labels, value);
    },
  };
}

/** A counter whose series are read from `series` at each scrape. */
function counterOf(registry: Registry, series: LabeledSeries): void {
  new Counter<string>(readAtScrape(registry, series, (counter: Counter<string>, labels, value) => counter.inc(labels, value)));
}

/** A gauge whose series are read from `series` at each scrape. */
function labeledGaugeOf(registry: Registry, series: LabeledSeries): void {
  new Gauge<string>(readAtScrape(registry, series, (gauge: Gauge<string>, labels, value) => gauge.set(labels, value)));
}

/** A gauge without labels set from `read` at each scrape (undefined keeps the last value). */
function gaugeOf(registry: Registry, name: string, help: string, read: () => number | undefined): void {
  new Gauge({
    name,
    help,
    registers: [registry],
    collect() {
      const value = read();
      if (value !== undefined) this.set(value);
    },
  });
}

/** `listing_agent_ready`, `listing_agent_component_ready` (read from the readiness at each scrape) and `listing_agent_info`. */
function registerStatusGauges(registry: Registry, recorded: RecordedMetrics): void {
  const { readiness } = recorded;
  gaugeOf(
    registry,
    'listing_agent_ready',
    '1 when the agent reached the service and every enabled capability is running, else 0 (see /readyz for why).',
    () => (readiness ? (readiness.snapshot().ready ? 1 : 0) : recorded.ready),
  );
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
}

/** See {@link AgentMetrics.watchCluster}. */
function registerClusterGauges(registry: Registry, read: () => { redisUp: boolean; agentId: string; leading: boolean }): void {
  gaugeOf(
    registry,
    'listing_agent_redis_up',
    '1 while connected to the Redis primary (state.redis), else 0 (down, or on a replica): ' +
      'webhook votes are then answered 503 and leader work stops.',
    () => (read().redisUp ? 1 : 0),
  );
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

/** Registers one of the metrics that appear at their first use. */
function registerLater(registry: Registry, recorded: RecordedMetrics, metric: LaterMetric): void {
  switch (metric) {
    case 'statsInterval':
      return gaugeOf(
        registry,
        'listing_agent_stats_interval_seconds',
        'The longest expected time between two regular stats posts: stats.interval, or the longest gap between the matches of ' +
          'stats.schedule in the coming week, plus stats.jitter.',
        () => recorded.statsInterval,
      );
    case 'voteLedger':
      gaugeOf(
        registry,
        'listing_agent_votes_pending',
        "Votes whose reward hooks have not all succeeded or been given up yet (with state.redis: every agent's).",
        () => recorded.voteLedger?.()?.pending,
      );
      return gaugeOf(
        registry,
        'listing_agent_votes_dead_letters',
        'Reward hook calls given up after their last retry, waiting for a replay (listing-agent votes failed lists them, votes retry ' +
          'replays them); alert when above 0.',
        () => recorded.voteLedger?.()?.deadLetters,
      );
    case 'pushShare':
      return gaugeOf(
        registry,
        'listing_agent_push_reports_unshared',
        'Shard reports the bot pushed to this agent that are not in Redis yet (Redis unreachable: held, written when it returns); alert ' +
          'when above 0 for long.',
        () => recorded.pushShare?.(),
      );
    case 'cluster':
      return registerClusterGauges(registry, () => recorded.cluster!());
    case 'stateWrites':
      gaugeOf(
        registry,
        'listing_agent_state_writable',
        '1 while the state directory takes writes, 0 while it does not (a full disk, a read-only file system: /readyz says which); new ' +
          'votes are refused meanwhile.',
        () => (recorded.stateWritable() ? 1 : 0),
      );
      return counterOf(registry, recorded.stateWriteErrors);
  }
}

/**
 * Serves `recorded` on `registry` (default: a new one), which it returns: each metric is
 * registered now, or at its first use for those that appear then, and reads its values at each
 * scrape. Registering twice on one registry throws.
 */
export function serveRecordedMetrics(recorded: RecordedMetrics, registry: Registry = new Registry()): Registry {
  registerStatusGauges(registry, recorded);
  labeledGaugeOf(registry, recorded.lastSuccess);
  for (const series of recorded.counters) counterOf(registry, series);
  for (const metric of recorded.appeared) registerLater(registry, recorded, metric);
  recorded.onAppear((metric) => registerLater(registry, recorded, metric));
  return registry;
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
  const recorder = createMetricsRecorder(readiness);
  serveRecordedMetrics(recorder.recorded, registry);
  return recorder;
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
