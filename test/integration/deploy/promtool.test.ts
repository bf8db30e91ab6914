import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { programPath } from '../../setup/provided.js';
import { readRepoFile, REPO_ROOT } from './deploy-files.js';
import { ALERTS_PATH, dashboardQueries, PROMETHEUS_CONFIG_PATH, readDashboard, readRules } from './monitoring-files.js';

/**
 * deploy/prometheus/ checked by Prometheus's own tool: the rules parse (`check rules`), the
 * config loads (`check config`), and each alert fires on made-up series where it should and
 * stays quiet where it should not (`test rules`); the dashboard's queries parse as PromQL too. The test setup (test/setup/) finds `promtool`,
 * or installs Debian's `prometheus` package as root; without it this file is skipped with one
 * line saying how to get it, and monitoring.test.ts still checks the rules' shape.
 */

const PROMTOOL = programPath('promtool');
const RULES_FILE = join(REPO_ROOT, ALERTS_PATH);

const temp = mkdtempSync(join(tmpdir(), 'listing-agent-promtool-'));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

function promtool(args: string[]) {
  const result = spawnSync(PROMTOOL ?? 'promtool', args, { encoding: 'utf8' });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

type Labels = Record<string, string>;
const JOB = 'listing-agent';
const A = { job: JOB, instance: 'agent-a:9464' };
const B = { job: JOB, instance: 'agent-b:9464' };

/** One input series in promtool's notation (`0+10x60`: from 0, +10 per step, 60 steps). */
const series = (metric: string, labels: Labels, values: string) => ({
  series: `${metric}{${Object.entries(labels).map(([k, v]) => `${k}="${v}"`).join(',')}}`,
  values,
});

const descriptions = new Map(readRules().groups.flatMap((g) => g.rules).map((rule) => [String(rule.alert), String((rule.annotations as Labels).description)]));

/**
 * An alert expected at `eval_time`: its labels and summary as written here, its description the
 * rule's own with the `{{ $labels.x }}` filled in (a description that needs more is a test to extend).
 */
function firing(alertname: string, at: string, labels: Labels, summary: string) {
  const template = descriptions.get(alertname)!;
  expect(template, alertname).not.toMatch(/\{\{(?!\s*\$labels\.\w+\s*\}\})/);
  const description = template.replace(/\{\{\s*\$labels\.(\w+)\s*\}\}/g, (_, name: string) => labels[name] ?? '');
  return { eval_time: at, alertname, exp_alerts: [{ exp_labels: { severity: 'page', ...labels }, exp_annotations: { summary, description } }] };
}
const quiet = (alertname: string, at: string) => ({ eval_time: at, alertname, exp_alerts: [] });

/** The cases: each a set of series over time and what each alert says at some moments. */
const CASES = [
  {
    name: 'no post since t=0 with a 30 m interval: quiet at 2 intervals, firing 5 min after',
    input_series: [
      series('listing_agent_stats_interval_seconds', A, '1800x120'),
      series('listing_agent_last_success_timestamp_seconds', { ...A, capability: 'stats' }, '0x120'),
      // The standby agent posts nothing and has no stats gauges at all.
      series('listing_agent_ready', B, '1x120'),
    ],
    alert_rule_test: [
      quiet('ListingAgentNoSuccessfulPost', '60m'),
      quiet('ListingAgentNoSuccessfulPost', '65m'),
      firing('ListingAgentNoSuccessfulPost', '70m', { job: JOB }, 'listing-agent: no successful stats post for 1h 10m 0s'),
      quiet('ListingAgentStatsNeverPosted', '90m'),
    ],
  },
  {
    name: 'the other agent took over and posted at 60 m: the newest post of the job counts',
    input_series: [
      series('listing_agent_stats_interval_seconds', A, '1800x120'),
      series('listing_agent_last_success_timestamp_seconds', { ...A, capability: 'stats' }, '0x120'),
      series('listing_agent_stats_interval_seconds', B, '_x59 1800x60'),
      series('listing_agent_last_success_timestamp_seconds', { ...B, capability: 'stats' }, '_x59 3600x60'),
    ],
    alert_rule_test: [quiet('ListingAgentNoSuccessfulPost', '100m')],
  },
  {
    name: 'stats on, never a success: firing after an hour',
    input_series: [series('listing_agent_stats_interval_seconds', A, '1800x90')],
    alert_rule_test: [
      quiet('ListingAgentStatsNeverPosted', '30m'),
      firing('ListingAgentStatsNeverPosted', '65m', { job: JOB }, 'listing-agent: stats are on but no post has ever succeeded'),
      quiet('ListingAgentNoSuccessfulPost', '65m'),
    ],
  },
  {
    name: 'two dead letters from 5 m on, seen by both agents (one Redis ledger): one alert',
    input_series: [series('listing_agent_votes_dead_letters', A, '0x5 2x20'), series('listing_agent_votes_dead_letters', B, '0x5 2x20')],
    alert_rule_test: [
      quiet('ListingAgentDeadLetters', '8m'),
      firing('ListingAgentDeadLetters', '15m', { job: JOB }, 'listing-agent: 2 vote rewards were given up (dead letters)'),
    ],
  },
  {
    name: 'hook failure ratios: reward fails a third of its calls, log a tenth, rare fails every call but rarely',
    input_series: [
      series('listing_agent_hook_runs_total', { ...A, hook: 'reward', result: 'ok' }, '0+10x60'),
      series('listing_agent_hook_runs_total', { ...A, hook: 'reward', result: 'error' }, '0+4x60'),
      series('listing_agent_hook_runs_total', { ...A, hook: 'reward', result: 'dead_letter' }, '0+1x60'),
      series('listing_agent_hook_runs_total', { ...A, hook: 'log', result: 'ok' }, '0+9x60'),
      series('listing_agent_hook_runs_total', { ...A, hook: 'log', result: 'error' }, '0+1x60'),
      series('listing_agent_hook_runs_total', { ...A, hook: 'rare', result: 'error' }, '0+0.2x60'),
    ],
    alert_rule_test: [
      quiet('ListingAgentHookFailures', '10m'),
      firing('ListingAgentHookFailures', '40m', { job: JOB, hook: 'reward' }, 'listing-agent: the reward hook reward fails 33.33% of its calls'),
    ],
  },
  {
    name: 'agent-a leads until 10 m, then nobody: firing 2 min later',
    input_series: [series('listing_agent_leader', { ...A, agent: 'agent-a' }, '1x10 0x20'), series('listing_agent_leader', { ...B, agent: 'agent-b' }, '0x30')],
    alert_rule_test: [
      quiet('ListingAgentNoLeader', '9m'),
      quiet('ListingAgentNoLeader', '11m'),
      firing('ListingAgentNoLeader', '15m', { job: JOB }, 'listing-agent: no agent holds the leader lease'),
    ],
  },
  {
    name: 'agent-a not ready for good, agent-b flapping: only agent-a, after 10 min',
    input_series: [series('listing_agent_ready', A, '0x30'), series('listing_agent_ready', B, Array.from({ length: 31 }, (_, i) => i % 2).join(' '))],
    alert_rule_test: [
      quiet('ListingAgentNotReady', '9m'),
      firing('ListingAgentNotReady', '15m', { ...A }, 'listing-agent agent-a:9464 has not been ready for 10 minutes'),
    ],
  },
  {
    name: 'agent-a stops answering scrapes',
    input_series: [series('up', A, '0x10'), series('up', B, '1x10')],
    alert_rule_test: [quiet('ListingAgentDown', '3m'), firing('ListingAgentDown', '8m', { ...A }, 'listing-agent agent-a:9464 does not answer /metrics')],
  },
];

describe.skipIf(!PROMTOOL)('deploy/prometheus, checked by promtool', () => {
  it('check rules: every rule and template parses', () => {
    const { status, output } = promtool(['check', 'rules', RULES_FILE]);
    expect(status, output).toBe(0);
    const count = readRules().groups.reduce((sum, group) => sum + group.rules.length, 0);
    expect(output).toContain(`SUCCESS: ${count} rules found`);
  });

  it('check config: prometheus.yml loads, with the rule file where the container mounts it', () => {
    const config = parse(readRepoFile(PROMETHEUS_CONFIG_PATH)) as { rule_files: string[] };
    expect(config.rule_files).toEqual(['/etc/prometheus/alerts.yaml']);
    const file = join(temp, 'prometheus.yml');
    writeFileSync(file, stringify({ ...config, rule_files: [RULES_FILE] }));
    const { status, output } = promtool(['check', 'config', file]);
    expect(status, output).toBe(0);
    expect(output).toContain('SUCCESS');
  });

  it("the dashboard's queries are PromQL Prometheus parses, once Grafana's variables are filled in", () => {
    const filled = (expr: string) => expr.replaceAll('$__rate_interval', '2m').replaceAll('$__interval', '1m').replace(/\$\{?(job|instance)\}?/g, '.*');
    const queries = dashboardQueries(readDashboard());
    const rules = queries.map((query, i) => ({ record: `dashboard:query_${i}`, expr: filled(query.expr) }));
    for (const rule of rules) expect(rule.expr, 'a Grafana variable left').not.toContain('$');
    const file = join(temp, 'dashboard-queries.yaml');
    writeFileSync(file, stringify({ groups: [{ name: 'dashboard', rules }] }));
    const { status, output } = promtool(['check', 'rules', file]);
    expect(status, `${output}\n${queries.map((q, i) => `query_${i}: ${q.where}`).join('\n')}`).toBe(0);
    expect(output).toContain(`SUCCESS: ${queries.length} rules found`);
  });

  it('test rules: each alert fires where it should, with its labels and words, and stays quiet elsewhere', () => {
    const tested = new Set(CASES.flatMap((c) => c.alert_rule_test.map((t) => t.alertname)));
    expect([...tested].sort()).toEqual([...descriptions.keys()].sort());
    const file = join(temp, 'alerts.test.yaml');
    writeFileSync(file, stringify({ rule_files: [RULES_FILE], evaluation_interval: '1m', tests: CASES.map(({ name: _, ...test }) => ({ interval: '1m', ...test })) }));
    const { status, output } = promtool(['test', 'rules', file]);
    expect(status, `${output}\n(cases: ${CASES.map((c) => c.name).join('; ')})`).toBe(0);
    expect(output).toContain('SUCCESS');
  });
});
