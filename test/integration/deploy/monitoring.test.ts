import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { CONFIG_FILE_VARIABLE, configEnvironmentVariables } from '../../../src/config/fields.js';
import { readRepoFile, REPO_ROOT } from './deploy-files.js';
import {
  ALERTS_PATH,
  allPanels,
  dashboardQueries,
  PROMETHEUS_CONFIG_PATH,
  promqlSelectors,
  promqlTokens,
  readDashboard,
  readRules,
  ruleQueries,
} from './monitoring-files.js';

/**
 * The monitoring files checked without Prometheus or Grafana: the alert rules' shape (what
 * `promtool check rules` also checks, where promtool is: promtool.test.ts), the dashboard's JSON,
 * and the compose profile that runs both. That every metric they query is served by a live agent
 * is monitoring-metrics.test.ts.
 */

const metricsOf = (expr: string) => [...new Set(promqlSelectors(expr).map((s) => s.metric))];

describe('reading PromQL: the metrics an expression queries', () => {
  it('skips functions, aggregations, grouping labels, keywords, strings, durations and Grafana variables', () => {
    expect(metricsOf('sum by (job, hook) (rate(a_total{result=~"error|x"}[15m])) / on (job) group_left (agent) b > bool 0.2')).toEqual(['a_total', 'b']);
    expect(metricsOf('max(a) by (job) unless on(job) max without (instance) (b offset 1h)')).toEqual(['a', 'b']);
    expect(metricsOf('time() - max(a{capability="stats", job=~"$job"}) > 2 * c')).toEqual(['a', 'c']);
    expect(metricsOf('increase(a[$__rate_interval]) + rate(b[5m:30s]) + 1e3 - inf')).toEqual(['a', 'b']);
    // Text in a string is a value, never a metric.
    expect(metricsOf('a{note="sum(b) by (c)", x=\'d\'} # a comment naming e')).toEqual(['a']);
    expect(metricsOf('{__name__="a", job="x"} and on() b:recorded')).toEqual(['a', 'b:recorded']);
  });

  it('keeps each selector\'s matchers', () => {
    expect(promqlSelectors('max by (job) (a{capability="stats", hook!~"x.*"})')).toEqual([
      {
        metric: 'a',
        matchers: [
          { name: 'capability', op: '=', value: 'stats' },
          { name: 'hook', op: '!~', value: 'x.*' },
        ],
      },
    ]);
  });

  it('refuses what it cannot read, rather than finding nothing', () => {
    expect(() => promqlSelectors('a{job=}')).toThrow(/not a label matcher/);
    expect(() => promqlSelectors('sum(a')).not.toThrow();
    expect(() => promqlSelectors('a{job="x"')).toThrow(/never closed/);
    expect(() => promqlSelectors('a{job="x}')).toThrow(/unterminated/);
    expect(() => promqlTokens('a ? b')).toThrow(/cannot read/);
  });
});

/** A Prometheus duration (`5m`, `1h30m`, `10s`), as its parser takes it. */
const DURATION = /^(?:\d+y)?(?:\d+w)?(?:\d+d)?(?:\d+h)?(?:\d+m)?(?:\d+s)?(?:\d+ms)?$/;
const RULE_KEYS = new Set(['alert', 'expr', 'for', 'keep_firing_for', 'labels', 'annotations']);

/** The labels an alert's annotations may name: those every `by (...)` of its expression keeps (any, without one). */
function keptLabels(expr: string): Set<string> | undefined {
  const tokens = promqlTokens(expr);
  let kept: Set<string> | undefined;
  tokens.forEach((token, i) => {
    if (token.kind !== 'ident' || token.text !== 'by' || tokens[i + 1]?.text !== '(') return;
    const names = new Set<string>();
    for (let j = i + 2; tokens[j]?.text !== ')'; j += 1) if (tokens[j]!.kind === 'ident') names.add(tokens[j]!.text);
    kept = kept ? new Set([...kept].filter((name) => names.has(name))) : names;
  });
  return kept;
}

describe(`${ALERTS_PATH}, checked without promtool`, () => {
  const rules = readRules();
  const alerts = rules.groups.flatMap((group) => group.rules);

  it('is groups of named rule lists', () => {
    expect(Object.keys(rules)).toEqual(['groups']);
    expect(rules.groups.length).toBeGreaterThan(0);
    const names = rules.groups.map((group) => group.name);
    expect(new Set(names).size).toBe(names.length);
    for (const group of rules.groups) {
      expect(typeof group.name === 'string' && group.name !== '', JSON.stringify(group.name)).toBe(true);
      expect(Array.isArray(group.rules) && group.rules.length > 0, group.name).toBe(true);
      if (group.interval !== undefined) expect(group.interval).toMatch(DURATION);
    }
  });

  it('has alerts with a unique name, an expression it reads, a duration, string labels and severity page', () => {
    const problems: string[] = [];
    const names = alerts.map((rule) => rule.alert);
    expect(new Set(names).size).toBe(names.length);
    for (const rule of alerts) {
      const name = String(rule.alert);
      const unknown = Object.keys(rule).filter((key) => !RULE_KEYS.has(key));
      if (unknown.length > 0) problems.push(`${name}: unknown keys ${unknown.join(', ')}`);
      if (typeof rule.alert !== 'string' || !/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(rule.alert)) problems.push(`${name}: not an alert name`);
      if (typeof rule.expr !== 'string' || rule.expr.trim() === '') problems.push(`${name}: no expr`);
      else if (metricsOf(rule.expr).length === 0) problems.push(`${name}: the expr queries no metric`);
      for (const key of ['for', 'keep_firing_for'] as const) {
        const value = rule[key];
        if (value !== undefined && (typeof value !== 'string' || value === '' || !DURATION.test(value))) problems.push(`${name}: ${key} '${String(value)}' is not a duration`);
      }
      const labels = (rule.labels ?? {}) as Record<string, unknown>;
      for (const [key, value] of Object.entries(labels)) if (typeof value !== 'string' || !/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(key)) problems.push(`${name}: label ${key}`);
      if (labels.severity !== 'page') problems.push(`${name}: severity is not page`);
    }
    expect(problems).toEqual([]);
  });

  it('says in each annotation what happened and what to do: the doctor and the docs', () => {
    const problems: string[] = [];
    for (const rule of alerts) {
      const name = String(rule.alert);
      const annotations = (rule.annotations ?? {}) as Record<string, unknown>;
      for (const key of ['summary', 'description']) {
        const text = annotations[key];
        if (typeof text !== 'string' || text.trim() === '') problems.push(`${name}: no ${key}`);
      }
      const description = String(annotations.description);
      if (!description.includes('listing-agent doctor')) problems.push(`${name}: the description does not point to listing-agent doctor`);
      for (const doc of description.match(/docs\/[a-z-]+\.md/g) ?? []) if (!existsSync(join(REPO_ROOT, doc))) problems.push(`${name}: ${doc} does not exist`);
      if (!/docs\/operations\.md, "Dashboards and alerts"/.test(description)) problems.push(`${name}: the description does not point to docs/operations.md, "Dashboards and alerts"`);
      // Templates: balanced, and naming only labels the expression keeps.
      const kept = keptLabels(String(rule.expr));
      for (const text of Object.values(annotations).map(String)) {
        if (text.split('{{').length !== text.split('}}').length) problems.push(`${name}: unbalanced {{ }} in '${text}'`);
        for (const [, label] of text.matchAll(/\$labels\.([a-zA-Z_][a-zA-Z0-9_]*)/g)) {
          if (kept && !kept.has(label!)) problems.push(`${name}: names $labels.${label!}, which its expression aggregates away`);
        }
      }
    }
    expect(problems).toEqual([]);
    expect(readDashboard().description).toContain('docs/operations.md, "Dashboards and alerts"');
    expect(readRepoFile('docs/operations.md')).toMatch(/^## Dashboards and alerts$/m);
  });

  it('has the alerts the issue asks for, over the metrics that tell', () => {
    const byName = new Map(alerts.map((rule) => [String(rule.alert), rule]));
    const wanted: Record<string, { metrics: string[]; for?: string }> = {
      // No successful post for 2 intervals: the age of the last one against the interval gauge.
      ListingAgentNoSuccessfulPost: { metrics: ['listing_agent_last_success_timestamp_seconds', 'listing_agent_stats_interval_seconds'] },
      ListingAgentDeadLetters: { metrics: ['listing_agent_votes_dead_letters'] },
      ListingAgentHookFailures: { metrics: ['listing_agent_hook_runs_total'] },
      ListingAgentNoLeader: { metrics: ['listing_agent_leader'] },
      ListingAgentNotReady: { metrics: ['listing_agent_ready'], for: '10m' },
    };
    for (const [name, want] of Object.entries(wanted)) {
      const rule = byName.get(name);
      expect(rule, name).toBeDefined();
      expect(metricsOf(String(rule!.expr)).sort(), name).toEqual([...want.metrics].sort());
      if (want.for) expect(rule!.for, name).toBe(want.for);
    }
    expect(String(byName.get('ListingAgentNoSuccessfulPost')!.expr)).toMatch(/2 \* max by \(job\) \(listing_agent_stats_interval_seconds\)/);
  });
});

/** Every `datasource` value anywhere in `value`, with its JSON path. */
function datasources(value: unknown, path = '$'): { path: string; value: unknown }[] {
  if (Array.isArray(value)) return value.flatMap((item, i) => datasources(item, `${path}[${i}]`));
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, inner]) => [...(key === 'datasource' ? [{ path: `${path}.${key}`, value: inner }] : []), ...datasources(inner, `${path}.${key}`)]);
}

/** The panels the issue asks for, by title, and a metric each must query. */
const REQUIRED_PANELS: Record<string, string> = {
  'Stats posts by outcome': 'listing_agent_posts_total',
  'Last success age': 'listing_agent_last_success_timestamp_seconds',
  'Votes received': 'listing_agent_votes_received_total',
  'Reward hook runs by outcome': 'listing_agent_hook_runs_total',
  'Webhook deliveries by outcome': 'listing_agent_webhook_deliveries_total',
  Leader: 'listing_agent_leader',
  Ready: 'listing_agent_ready',
  'Redis up': 'listing_agent_redis_up',
  'Process memory': 'process_resident_memory_bytes',
  'Process CPU': 'process_cpu_seconds_total',
};

describe('deploy/grafana/listing-agent.json', () => {
  const dashboard = readDashboard();
  const panels = allPanels(dashboard);

  it('is an importable dashboard asking for one Prometheus data source, DS_PROMETHEUS', () => {
    expect(dashboard.title).toBe('listing-agent');
    expect(dashboard.uid).toMatch(/^[a-zA-Z0-9-]{1,40}$/);
    expect(dashboard.__inputs).toEqual([expect.objectContaining({ name: 'DS_PROMETHEUS', type: 'datasource', pluginId: 'prometheus' })]);
    // Provisioned from a file, Grafana fills ${DS_PROMETHEUS} from a variable of that name
    // (an import fills it from __inputs): one file serves both ways.
    expect(dashboard.templating.list).toContainEqual(expect.objectContaining({ name: 'DS_PROMETHEUS', type: 'datasource', query: 'prometheus' }));
  });

  it('uses only the input data source, everywhere a data source is named', () => {
    const found = datasources(dashboard);
    expect(found.length).toBeGreaterThan(panels.length);
    const others = found.filter((d) => JSON.stringify(d.value) !== JSON.stringify({ type: 'prometheus', uid: '${DS_PROMETHEUS}' }));
    expect(others).toEqual([]);
    for (const panel of panels.filter((p) => p.type !== 'row')) expect(panel.datasource, panel.title).toBeDefined();
  });

  it('has the panels the issue asks for, each querying its metric', () => {
    for (const [title, metric] of Object.entries(REQUIRED_PANELS)) {
      const panel = panels.find((p) => p.title === title);
      expect(panel, title).toBeDefined();
      const queried = (panel!.targets ?? []).flatMap((t) => metricsOf(t.expr));
      expect(queried, title).toContain(metric);
    }
  });

  it('has unique panel IDs, unique refIds per panel, a query in every panel, and no two panels on one spot', () => {
    const ids = panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    const boxes: { title: string; x: number; y: number; w: number; h: number }[] = [];
    for (const panel of panels) {
      const { gridPos } = panel as unknown as { gridPos: { x: number; y: number; w: number; h: number } };
      expect(gridPos.x + gridPos.w, panel.title).toBeLessThanOrEqual(24);
      for (const box of boxes) {
        const overlaps = gridPos.x < box.x + box.w && box.x < gridPos.x + gridPos.w && gridPos.y < box.y + box.h && box.y < gridPos.y + gridPos.h;
        expect(overlaps, `${panel.title} over ${box.title}`).toBe(false);
      }
      boxes.push({ title: panel.title, ...gridPos });
      if (panel.type === 'row') continue;
      const refIds = (panel.targets ?? []).map((t) => t.refId);
      expect(refIds.length, panel.title).toBeGreaterThan(0);
      expect(new Set(refIds).size, panel.title).toBe(refIds.length);
    }
    for (const { where, expr } of dashboardQueries(dashboard)) expect(metricsOf(expr).length, where).toBeGreaterThan(0);
    expect(ruleQueries(readRules()).length).toBeGreaterThan(4);
  });
});

interface ComposeService {
  image?: string;
  profiles?: string[];
  volumes?: string[];
  ports?: string[];
  networks?: string[];
  environment?: Record<string, string>;
  depends_on?: string[];
}

describe('deploy/compose.yaml: the monitoring profile', () => {
  const compose = parse(readRepoFile('deploy/compose.yaml')) as { services: Record<string, ComposeService>; volumes: Record<string, unknown> };
  const { services } = compose;
  const prometheusConfig = parse(readRepoFile(PROMETHEUS_CONFIG_PATH)) as {
    rule_files: string[];
    scrape_configs: { job_name: string; metrics_path?: string; static_configs: { targets: string[] }[] }[];
  };
  /** `./host/path` -> `/container/path` of a service's bind mounts. */
  const binds = (service: ComposeService) =>
    new Map((service.volumes ?? []).filter((v) => v.startsWith('./')).map((v) => [v.split(':')[0]!, v.split(':')[1]!] as const));

  it('runs Prometheus and Grafana only with --profile monitoring; the agent and the bot without', () => {
    expect(services.prometheus?.profiles).toEqual(['monitoring']);
    expect(services.grafana?.profiles).toEqual(['monitoring']);
    expect(services['listing-agent']?.profiles).toBeUndefined();
    expect(services.bot?.profiles).toBeUndefined();
    for (const name of ['prometheus', 'grafana']) {
      expect(services[name]!.image, name).toMatch(/^(prom\/prometheus|grafana\/grafana):v?\d+\.\d+\.\d+$/);
      expect(services[name]!.networks, name).toEqual(services['listing-agent']!.networks);
      for (const port of services[name]!.ports ?? []) expect(port, name).toMatch(/^127\.0\.0\.1:/);
      for (const volume of services[name]!.volumes ?? []) {
        const source = volume.split(':')[0]!;
        if (source.startsWith('./')) expect(existsSync(join(REPO_ROOT, 'deploy', source)), volume).toBe(true);
        else expect(compose.volumes, volume).toHaveProperty(source);
      }
    }
  });

  it("gives Prometheus its config and the rules where the config looks, scraping the agent's health port", () => {
    const mounts = binds(services.prometheus!);
    expect(mounts.get('./prometheus/prometheus.yml')).toBe('/etc/prometheus/prometheus.yml');
    expect(prometheusConfig.rule_files).toEqual([mounts.get('./prometheus/alerts.yaml')]);
    const job = prometheusConfig.scrape_configs.find((c) => c.job_name === 'listing-agent');
    expect(job, 'the job the ListingAgentDown rule names').toBeDefined();
    expect(job!.metrics_path ?? '/metrics').toBe('/metrics');
    // The image's health.listen (Dockerfile: LISTING_AGENT_HEALTH_LISTEN=0.0.0.0:9464) on the agent's service name.
    const port = /LISTING_AGENT_HEALTH_LISTEN=0\.0\.0\.0:(\d+)/.exec(readRepoFile('Dockerfile'))![1];
    expect(job!.static_configs.flatMap((c) => c.targets)).toEqual([`listing-agent:${port}`]);
    expect(String(readRules().groups[0]!.rules.find((r) => r.alert === 'ListingAgentDown')!.expr)).toContain('job="listing-agent"');
  });

  it('provisions Grafana with the Prometheus service as data source and the dashboard file', () => {
    const mounts = binds(services.grafana!);
    expect(mounts.get('./grafana/provisioning')).toBe('/etc/grafana/provisioning');
    const datasource = parse(readRepoFile('deploy/grafana/provisioning/datasources/prometheus.yaml')) as { datasources: { type: string; url: string; isDefault: boolean }[] };
    expect(datasource.datasources).toEqual([expect.objectContaining({ type: 'prometheus', url: 'http://prometheus:9090', isDefault: true })]);
    const provider = parse(readRepoFile('deploy/grafana/provisioning/dashboards/listing-agent.yaml')) as { providers: { type: string; options: { path: string } }[] };
    expect(provider.providers).toHaveLength(1);
    expect(mounts.get('./grafana/listing-agent.json')).toBe(`${provider.providers[0]!.options.path}/listing-agent.json`);
  });

  it('sets only variables the agent knows, comments included', () => {
    const known = new Set([...configEnvironmentVariables().map((v) => v.name), CONFIG_FILE_VARIABLE]);
    const used = [...readRepoFile('deploy/compose.yaml').matchAll(/\b(LISTING_AGENT_[A-Z0-9_]+)\b/g)].map((m) => m[1]!);
    expect(used.length).toBeGreaterThan(0);
    expect(used.filter((name) => !known.has(name))).toEqual([]);
  });
});
