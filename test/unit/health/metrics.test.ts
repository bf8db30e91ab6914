import { register as globalRegistry, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createReadiness } from '../../../src/runtime/readiness.js';
import { CLIENT_VERSION } from '../../../src/api/version.js';
import { collectProcessMetrics, createAgentMetrics } from '../../../src/runtime/metrics.js';

const NAMES = [
  'listing_agent_posts_total',
  'listing_agent_votes_received_total',
  'listing_agent_hook_runs_total',
  'listing_agent_webhook_deliveries_total',
  'listing_agent_command_syncs_total',
  'listing_agent_last_success_timestamp_seconds',
  'listing_agent_ready',
  'listing_agent_component_ready',
  'listing_agent_info',
];

describe('createAgentMetrics', () => {
  it('registers every metric, with help text, on the given registry only', async () => {
    const registry = new Registry();
    createAgentMetrics(registry);
    const text = await registry.metrics();
    for (const name of NAMES) {
      expect(text, name).toMatch(new RegExp(`^# HELP ${name} \\S.+$`, 'm'));
      expect(text, name).toMatch(new RegExp(`^# TYPE ${name} (counter|gauge)$`, 'm'));
      expect(globalRegistry.getSingleMetric(name), name).toBeUndefined();
    }
    for (const metric of registry.getMetricsAsArray()) expect(metric.name).toMatch(/^listing_agent_/);
  });

  it('starts every known label combination at 0', async () => {
    const registry = new Registry();
    createAgentMetrics(registry);
    const text = await registry.metrics();
    expect(text).toContain('listing_agent_posts_total{target="v1_batch",result="skipped"} 0');
    expect(text).toContain('listing_agent_votes_received_total{road="poll"} 0');
    expect(text).toContain('listing_agent_webhook_deliveries_total{outcome="duplicate"} 0');
    expect(text).toContain('listing_agent_command_syncs_total{result="unchanged"} 0');
    // A hook has no known name, so no series until one runs.
    expect(text).not.toMatch(/^listing_agent_hook_runs_total\{/m);
  });

  it('counts through typed handles', async () => {
    const registry = new Registry();
    const metrics = createAgentMetrics(registry);
    metrics.posts.inc({ target: 'v0', result: 'error' });
    metrics.hookRuns.inc({ hook: 'rewards', result: 'dead_letter' }, 2);
    metrics.webhookDeliveries.inc({ outcome: 'rejected' });
    metrics.commandSyncs.inc({ result: 'synced' });
    metrics.votesReceived.inc({ road: 'poll' }, 5);
    expect(await metrics.posts.get({ target: 'v0', result: 'error' })).toBe(1);
    expect(await metrics.posts.get({ target: 'v1', result: 'ok' })).toBe(0);
    expect(await metrics.hookRuns.get({ hook: 'rewards', result: 'dead_letter' })).toBe(2);
    const text = await registry.metrics();
    expect(text).toContain('listing_agent_hook_runs_total{hook="rewards",result="dead_letter"} 2');
    expect(text).toContain('listing_agent_webhook_deliveries_total{outcome="rejected"} 1');
    expect(text).toContain('listing_agent_command_syncs_total{result="synced"} 1');
    expect(text).toContain('listing_agent_votes_received_total{road="poll"} 5');
  });

  it('lets the compiler check label names and values', () => {
    const metrics = createAgentMetrics(new Registry());
    // @ts-expect-error: v2 is not a target
    metrics.posts.inc({ target: 'v2', result: 'ok' });
    // @ts-expect-error: result is missing
    metrics.posts.inc({ target: 'v1' });
    // @ts-expect-error: road is the only label; prom-client refuses others at run time too
    expect(() => metrics.votesReceived.inc({ road: 'poll', extra: 'x' })).toThrow();
  });

  it('markSuccess records the time in seconds per capability', async () => {
    const registry = new Registry();
    const metrics = createAgentMetrics(registry);
    metrics.markSuccess('stats', 1_700_000_000_500);
    expect(await metrics.lastSuccess.get({ capability: 'stats' })).toBe(1_700_000_000.5);
    expect(await metrics.lastSuccess.get({ capability: 'votes' })).toBeUndefined();
    expect(await registry.metrics()).toContain('listing_agent_last_success_timestamp_seconds{capability="stats"} 1700000000.5');
  });

  it('reads ready and component_ready from the readiness at each scrape', async () => {
    const registry = new Registry();
    const readiness = createReadiness(() => 0);
    createAgentMetrics(registry, readiness);
    readiness.set('service', false, 'not reached yet');
    readiness.set('store', true, 'memory');
    let text = await registry.metrics();
    expect(text).toMatch(/^listing_agent_ready 0$/m);
    expect(text).toContain('listing_agent_component_ready{component="service"} 0');
    expect(text).toContain('listing_agent_component_ready{component="store"} 1');

    readiness.set('service', true, 'project Test Bot');
    readiness.set('stats', true, 'posting');
    readiness.remove('stats');
    text = await registry.metrics();
    expect(text).toMatch(/^listing_agent_ready 1$/m);
    expect(text).toContain('listing_agent_component_ready{component="service"} 1');
    expect(text).not.toContain('component="stats"');
  });

  it('follows setReady when made without a readiness', async () => {
    const registry = new Registry();
    const metrics = createAgentMetrics(registry);
    expect(await registry.metrics()).toMatch(/^listing_agent_ready 0$/m);
    metrics.setReady(true);
    expect(await registry.metrics()).toMatch(/^listing_agent_ready 1$/m);
  });

  it('says which version runs', async () => {
    const registry = new Registry();
    createAgentMetrics(registry);
    expect(await registry.metrics()).toContain(`listing_agent_info{version="${CLIENT_VERSION}"} 1`);
  });

  it('keeps two registries in one process apart', async () => {
    const a = new Registry();
    const b = new Registry();
    const metricsA = createAgentMetrics(a);
    const metricsB = createAgentMetrics(b);
    metricsA.posts.inc({ target: 'v1', result: 'ok' }, 4);
    metricsB.posts.inc({ target: 'v1', result: 'ok' });
    expect(await metricsA.posts.get({ target: 'v1', result: 'ok' })).toBe(4);
    expect(await metricsB.posts.get({ target: 'v1', result: 'ok' })).toBe(1);
    expect(await b.metrics()).toContain('listing_agent_posts_total{target="v1",result="ok"} 1');
  });

  it('shows the stats interval only once it is set', async () => {
    const registry = new Registry();
    const metrics = createAgentMetrics(registry);
    expect(await registry.metrics()).not.toContain('listing_agent_stats_interval_seconds');
    metrics.setStatsInterval(1_800);
    metrics.setStatsInterval(1_860);
    expect(await registry.metrics()).toMatch(/^listing_agent_stats_interval_seconds 1860$/m);
  });

  it('reads pending votes and dead letters from the latest ledger reader at each scrape', async () => {
    const registry = new Registry();
    const metrics = createAgentMetrics(registry);
    expect(await registry.metrics()).not.toContain('listing_agent_votes_dead_letters');
    let sizes: { pending: number; deadLetters: number } | undefined = { pending: 3, deadLetters: 1 };
    metrics.watchVoteLedger(() => sizes);
    let text = await registry.metrics();
    expect(text).toMatch(/^listing_agent_votes_pending 3$/m);
    expect(text).toMatch(/^listing_agent_votes_dead_letters 1$/m);
    // The ledger closed: the last values stay.
    sizes = undefined;
    expect(await registry.metrics()).toMatch(/^listing_agent_votes_dead_letters 1$/m);
    // The capability started again with a new ledger: a second call replaces the reader.
    metrics.watchVoteLedger(() => ({ pending: 0, deadLetters: 0 }));
    text = await registry.metrics();
    expect(text).toMatch(/^listing_agent_votes_pending 0$/m);
    expect(text).toMatch(/^listing_agent_votes_dead_letters 0$/m);
  });

  it('shows the unshared push reports only once the push endpoint watches them, from the latest reader', async () => {
    const registry = new Registry();
    const metrics = createAgentMetrics(registry);
    expect(await registry.metrics()).not.toContain('listing_agent_push_reports_unshared');
    let unshared: number | undefined = 2;
    metrics.watchPushShare(() => unshared);
    expect(await registry.metrics()).toMatch(/^listing_agent_push_reports_unshared 2$/m);
    unshared = undefined;
    expect(await registry.metrics()).toMatch(/^listing_agent_push_reports_unshared 2$/m);
    metrics.watchPushShare(() => 0);
    expect(await registry.metrics()).toMatch(/^listing_agent_push_reports_unshared 0$/m);
  });

  it('refuses to register twice on one registry', () => {
    const registry = new Registry();
    createAgentMetrics(registry);
    expect(() => createAgentMetrics(registry)).toThrow(/already been registered/);
  });
});

describe('collectProcessMetrics', () => {
  it('adds the process metrics to the given registry once, never to the global one', async () => {
    const registry = new Registry();
    const before = globalRegistry.getMetricsAsArray().length;
    collectProcessMetrics(registry);
    collectProcessMetrics(registry);
    const text = await registry.metrics();
    expect(text).toContain('process_cpu_user_seconds_total');
    expect(text).toContain('nodejs_heap_size_used_bytes');
    expect(globalRegistry.getMetricsAsArray().length).toBe(before);
    // Alongside the agent's metrics, without a name clash.
    createAgentMetrics(registry);
    expect(await registry.metrics()).toContain('listing_agent_ready');
  });
});
