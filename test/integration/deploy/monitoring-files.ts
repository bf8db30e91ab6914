import { parse } from 'yaml';
import { readRepoFile } from './deploy-files.js';

/**
 * Readers for the monitoring files (deploy/grafana/listing-agent.json, deploy/prometheus/*.yaml)
 * and just enough of PromQL and of the Prometheus text format to tell which metrics and labels
 * the dashboard and the alert rules query, and whether a live agent serves them.
 */

export const DASHBOARD_PATH = 'deploy/grafana/listing-agent.json';
export const ALERTS_PATH = 'deploy/prometheus/alerts.yaml';
export const PROMETHEUS_CONFIG_PATH = 'deploy/prometheus/prometheus.yml';

/** Series Prometheus makes itself for each target (never on /metrics): the rules may query them. */
export const PROMETHEUS_OWN_SERIES = new Set(['up']);
/** Labels Prometheus attaches to every scraped series (the scrape job and target). */
export const TARGET_LABELS = new Set(['job', 'instance']);
/** Metrics only an agent with `state.redis` serves. */
export const REDIS_ONLY_METRICS = new Set(['listing_agent_leader', 'listing_agent_redis_up']);

/** One label matcher of a selector: `name op "value"`. */
export interface LabelMatcher {
  name: string;
  op: '=' | '!=' | '=~' | '!~';
  value: string;
}

/** A metric a PromQL expression queries, with its selector's matchers. */
export interface MetricSelector {
  metric: string;
  matchers: LabelMatcher[];
}

type Token = { kind: 'ident' | 'string' | 'number' | 'variable' | 'punct'; text: string };

const IDENT = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const NUMBER = /^(?:0x[0-9a-fA-F]+|[0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?[a-zA-Z0-9]*)/;
const OPERATORS = ['=~', '!~', '!=', '==', '>=', '<=', '(', ')', '{', '}', '[', ']', ',', '=', '>', '<', '+', '-', '*', '/', '%', '^', '@', ':'];

/** PromQL's tokens: strings (quotes removed), numbers and durations, identifiers, Grafana's `$vars`. */
export function promqlTokens(expr: string): Token[] {
  const tokens: Token[] = [];
  let rest = expr;
  while (rest.length > 0) {
    const space = /^(?:\s+|#[^\n]*)/.exec(rest);
    if (space) {
      rest = rest.slice(space[0].length);
      continue;
    }
    const quote = rest[0]!;
    if (quote === '"' || quote === "'" || quote === '`') {
      const end = stringEnd(rest, quote);
      tokens.push({ kind: 'string', text: rest.slice(1, end).replace(/\\(.)/g, '$1') });
      rest = rest.slice(end + 1);
      continue;
    }
    const token = nextToken(rest);
    if (!token) throw new Error(`PromQL: cannot read '${rest.slice(0, 20)}' in: ${expr}`);
    tokens.push(token);
    rest = rest.slice(token.text.length);
  }
  return tokens;
}

/** The token `text` starts with (not a string or a space). */
function nextToken(text: string): Token | undefined {
  const variable = /^\$(?:\{[^}]+\}|[a-zA-Z_][a-zA-Z0-9_]*)/.exec(text);
  if (variable) return { kind: 'variable', text: variable[0] };
  const number = NUMBER.exec(text);
  if (number && /^[0-9.]/.test(text)) return { kind: 'number', text: number[0] };
  const ident = IDENT.exec(text);
  if (ident) return { kind: 'ident', text: ident[0] };
  const punct = OPERATORS.find((op) => text.startsWith(op));
  return punct ? { kind: 'punct', text: punct } : undefined;
}

function stringEnd(text: string, quote: string): number {
  for (let i = 1; i < text.length; i += 1) {
    if (quote !== '`' && text[i] === '\\') i += 1;
    else if (text[i] === quote) return i;
  }
  throw new Error(`PromQL: unterminated string in: ${text}`);
}

/** Words that are not metric names when they stand alone (binary operators, modifiers, literals). */
const KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'atan2', 'inf', 'nan']);
/** Keywords followed by a list of label names in parentheses. */
const LABEL_LISTS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right']);

/** The index of the bracket that closes the one at `open`. */
function closing(tokens: Token[], open: number): number {
  const pairs: Record<string, string> = { '(': ')', '{': '}', '[': ']' };
  const want = pairs[tokens[open]!.text]!;
  let depth = 0;
  for (let i = open; i < tokens.length; i += 1) {
    if (tokens[i]!.kind !== 'punct') continue;
    if (tokens[i]!.text === tokens[open]!.text) depth += 1;
    else if (tokens[i]!.text === want && --depth === 0) return i;
  }
  throw new Error(`PromQL: '${tokens[open]!.text}' is never closed`);
}

function matchersIn(tokens: Token[], from: number, to: number): LabelMatcher[] {
  const matchers: LabelMatcher[] = [];
  for (let i = from; i < to; i += 1) {
    const [name, op, value] = [tokens[i]!, tokens[i + 1], tokens[i + 2]];
    if (name.kind === 'punct' && name.text === ',') continue;
    if (name.kind !== 'ident' || op?.kind !== 'punct' || !['=', '!=', '=~', '!~'].includes(op.text) || value?.kind !== 'string') {
      throw new Error(`PromQL: not a label matcher at '${name.text}'`);
    }
    matchers.push({ name: name.text, op: op.text as LabelMatcher['op'], value: value.text });
    i += 2;
  }
  return matchers;
}

/**
 * The metrics `expr` queries: every bare identifier that is not a function or aggregation (an
 * identifier before `(`), a keyword, or a label name (inside `{}` or a `by (...)` list), with
 * the matchers of its `{...}`; a bare `{__name__="x"}` counts as `x`. Range and subquery
 * brackets hold only durations and steps. Throws on text it cannot read.
 */
export function promqlSelectors(expr: string): MetricSelector[] {
  const tokens = promqlTokens(expr);
  const selectors: MetricSelector[] = [];
  for (let i = 0; i < tokens.length; i += 1) {
    const token = tokens[i]!;
    const next = tokens[i + 1];
    const opens = (text: string) => next?.kind === 'punct' && next.text === text;
    // `sum by (job) (...)`: an aggregation is followed by its grouping, a metric never is.
    const grouped = next?.kind === 'ident' && ['by', 'without'].includes(next.text.toLowerCase());
    if (token.kind === 'punct' && token.text === '[') {
      i = closing(tokens, i);
    } else if (token.kind === 'punct' && token.text === '{') {
      // A selector without a metric name before it.
      const end = closing(tokens, i);
      const matchers = matchersIn(tokens, i + 1, end);
      const name = matchers.find((m) => m.name === '__name__' && m.op === '=');
      if (name) selectors.push({ metric: name.value, matchers: matchers.filter((m) => m !== name) });
      i = end;
    } else if (token.kind === 'ident') {
      const word = token.text.toLowerCase();
      if (LABEL_LISTS.has(word) && opens('(')) i = closing(tokens, i + 1);
      else if (KEYWORDS.has(word) || opens('(') || grouped) continue;
      else if (opens('{')) {
        const end = closing(tokens, i + 1);
        selectors.push({ metric: token.text, matchers: matchersIn(tokens, i + 2, end) });
        i = end;
      } else selectors.push({ metric: token.text, matchers: [] });
    }
  }
  return selectors;
}

/** A Grafana dashboard, as far as the tests read it. */
export interface Dashboard {
  __inputs?: { name: string; type: string; pluginId: string }[];
  panels: Panel[];
  templating: { list: { name: string; type: string; query?: unknown; datasource?: unknown }[] };
  title: string;
  description: string;
  uid: string;
}

/** A panel (or row) of the dashboard. */
export interface Panel {
  id: number;
  type: string;
  title: string;
  datasource?: unknown;
  targets?: { expr: string; refId: string; datasource?: unknown }[];
  panels?: Panel[];
}

export function readDashboard(): Dashboard {
  return JSON.parse(readRepoFile(DASHBOARD_PATH)) as Dashboard;
}

/** Every panel, those inside rows included. */
export function allPanels(dashboard: Dashboard): Panel[] {
  return dashboard.panels.flatMap((panel) => [panel, ...(panel.panels ?? [])]);
}

/** One PromQL expression of the dashboard or the rules, and where it is. */
export interface QueryText {
  where: string;
  expr: string;
}

/**
 * The dashboard's PromQL: each panel target's `expr`, and each query variable's query
 * (`label_values(<selector>, <label>)`, Grafana's own function, reduced to the selector).
 */
export function dashboardQueries(dashboard: Dashboard): QueryText[] {
  const fromPanels = allPanels(dashboard).flatMap((panel) => (panel.targets ?? []).map((t) => ({ where: `panel '${panel.title}' ${t.refId}`, expr: t.expr })));
  const fromVariables = dashboard.templating.list
    .filter((variable) => variable.type === 'query')
    .map((variable) => {
      const query = typeof variable.query === 'string' ? variable.query : (variable.query as { query: string }).query;
      const labelValues = /^label_values\((.+),\s*[a-zA-Z_][a-zA-Z0-9_]*\)$/.exec(query.trim());
      return { where: `variable '${variable.name}'`, expr: labelValues ? labelValues[1]! : query };
    });
  return [...fromPanels, ...fromVariables];
}

/** A Prometheus rule file, as parsed. */
export interface RuleFile {
  groups: { name: string; interval?: string; rules: Record<string, unknown>[] }[];
}

export function readRules(): RuleFile {
  return parse(readRepoFile(ALERTS_PATH)) as RuleFile;
}

/** The rules' PromQL, one per rule. */
export function ruleQueries(rules: RuleFile): QueryText[] {
  return rules.groups.flatMap((group) => group.rules.map((rule) => ({ where: `rule ${String(rule.alert ?? rule.record)}`, expr: String(rule.expr) })));
}

/** Each metric of a scrape (the sample names, so a histogram shows `_bucket`, `_sum`, `_count`) -> its series' labels. */
export function scrapedSeries(text: string): Map<string, Record<string, string>[]> {
  const series = new Map<string, Record<string, string>[]>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+\S+/.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1]!] = pair[2]!;
    series.set(match[1]!, [...(series.get(match[1]!) ?? []), labels]);
  }
  return series;
}

/**
 * What a scrape lacks for `queries`: a metric with no sample, a label no series of it carries, an
 * `=` matcher's value no series has. Prometheus's own series and target labels are left out.
 */
export function missingFromScrape(queries: readonly QueryText[], scrape: Map<string, Record<string, string>[]>, ignore: ReadonlySet<string> = new Set()): string[] {
  const problems = new Set<string>();
  for (const { where, expr } of queries) {
    for (const { metric, matchers } of promqlSelectors(expr)) {
      if (PROMETHEUS_OWN_SERIES.has(metric) || ignore.has(metric)) continue;
      const series = scrape.get(metric);
      if (!series) {
        problems.add(`${metric} (${where}): not served`);
        continue;
      }
      for (const matcher of matchers.filter((m) => !TARGET_LABELS.has(m.name))) {
        if (!series.some((labels) => matcher.name in labels)) problems.add(`${metric} (${where}): no series has the label ${matcher.name}`);
        else if (matcher.op === '=' && !series.some((labels) => labels[matcher.name] === matcher.value)) {
          problems.add(`${metric} (${where}): no series has ${matcher.name}="${matcher.value}"`);
        }
      }
    }
  }
  return [...problems];
}

/** Every metric name the dashboard and the rules query (Prometheus's own series left out). */
export function queriedMetrics(): Set<string> {
  const queries = [...dashboardQueries(readDashboard()), ...ruleQueries(readRules())];
  return new Set(queries.flatMap((q) => promqlSelectors(q.expr).map((s) => s.metric)).filter((name) => !PROMETHEUS_OWN_SERIES.has(name)));
}
