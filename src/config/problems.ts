import type { z } from 'zod';
import type { FieldIssue } from '../errors.js';
import { withoutVariables } from './errors.js';
import { configFields, environmentVariableName, knownKeys } from './fields.js';

/** A field path as people read it: `votes.hooks[1].url`. An empty key is shown as `""`, so the path still names it. */
export function formatPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((text, key) => {
    if (typeof key === 'number') return `${text}[${key}]`;
    const name = key === '' ? '""' : String(key);
    return text ? `${text}.${name}` : name;
  }, '');
}

/** Whether `path` is `parent` or lies under it (`votes.hooks[1].url` under `votes.hooks`). */
export function isUnder(path: string, parent: string): boolean {
  return path === parent || path.startsWith(`${parent}.`) || path.startsWith(`${parent}[`);
}

function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = row;
  }
  return previous[b.length]!;
}

/**
 * The candidate closest to `word`, when it is close enough to be a typo (case, `_` and `-` are
 * ignored, so `poll_interval` finds `pollInterval`).
 */
export function didYouMean(word: string, candidates: readonly string[]): string | undefined {
  const normal = (text: string) => text.toLowerCase().replace(/[_-]/g, '');
  const target = normal(word);
  let best: { candidate: string; score: number } | undefined;
  for (const candidate of candidates) {
    const score = distance(target, normal(candidate));
    if (!best || score < best.score) best = { candidate, score };
  }
  const allowed = Math.max(2, Math.floor(target.length / 3));
  return best && best.score <= allowed ? best.candidate : undefined;
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let current = input;
  for (const key of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return `a ${typeof value}`;
}

const ARTICLE: Record<string, string> = { array: 'an array', object: 'an object', integer: 'an integer' };

/** What {@link describeIssues} knows beyond the issues. */
export interface IssueContext {
  /** The input that was validated (for what was missing and what type was there). */
  input: unknown;
  /** Paths whose `${VAR}` was empty or unset, with the variable. */
  unsetVariables: ReadonlyMap<string, string>;
  /** Paths set from `LISTING_AGENT_*` variables, with the variable. */
  environmentSources: ReadonlyMap<string, string>;
  /** Paths that already have a problem (a zod issue there would only repeat it). */
  reported: readonly string[];
  /**
   * Who reads the problems: `daemon` (the config file and `LISTING_AGENT_*` variables; the
   * default) or `embedded` (an object given to createListingAgent or parseConfig, which reads no
   * variable: none is named).
   */
  mode?: 'embedded' | 'daemon';
}

function missing(path: string, context: IssueContext): string {
  const variable = context.unsetVariables.get(path);
  if (variable !== undefined) return `missing: \${${variable}} is empty or not set (set ${variable} in the environment or .env)`;
  if (context.mode === 'embedded') {
    return path === 'service.token'
      ? 'missing (required): pass the project token as `token` to createListingAgent, or set service.token'
      : `missing (required): set ${path}`;
  }
  const field = configFields().find((f) => f.path.join('.') === path);
  const env = field ? ` or with ${environmentVariableName(field.path)}` : '';
  return `missing (required): set it in the config file${env}`;
}

function requiredUnder(path: string): string[] {
  return configFields()
    .filter((field) => field.required && isUnder(field.path.join('.'), path) && field.path.join('.') !== path)
    .map((field) => field.path.join('.'));
}

function describe(issue: z.core.$ZodIssue, path: string, context: IssueContext): string {
  switch (issue.code) {
    case 'invalid_type': {
      const value = valueAt(context.input, issue.path);
      if (value === undefined) return missing(path, context);
      return `must be ${ARTICLE[issue.expected] ?? `a ${issue.expected}`} (got ${kindOf(value)})`;
    }
    case 'invalid_value':
      return `must be one of ${issue.values.map(String).join(', ')}`;
    default:
      return issue.message;
  }
}

/**
 * zod issues as problems with their paths and a fix: `service.tokn: unknown field (did you mean
 * token?)`, `votes.hooks[1].url: must be an absolute URL (http or https)`. Messages name types
 * and variables, never a value, so no secret can leak through them.
 */
export function describeIssues(issues: readonly z.core.$ZodIssue[], context: IssueContext): FieldIssue[] {
  const problems: FieldIssue[] = [];
  const sourceNote = (path: string) => {
    for (const [field, variable] of context.environmentSources) if (isUnder(path, field)) return ` (from ${variable})`;
    return '';
  };
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      const schemaPath = issue.path.map((key) => (typeof key === 'number' ? '[]' : String(key)));
      const known = knownKeys(schemaPath);
      for (const key of issue.keys) {
        const path = formatPath([...issue.path, key]);
        const suggestion = didYouMean(key, known);
        const hint = suggestion ? ` (did you mean ${suggestion}?)` : ` (known fields: ${known.join(', ')})`;
        problems.push({ path, message: `unknown field${hint}${sourceNote(path)}` });
      }
      continue;
    }
    const path = formatPath(issue.path);
    if (context.reported.some((done) => isUnder(path, done))) continue;
    // A missing section (`service`) is reported as the fields it lacks (`service.token`): that
    // is what to write, and the leaf has an environment variable to name.
    const lacking = issue.code === 'invalid_type' && valueAt(context.input, issue.path) === undefined ? requiredUnder(path) : [];
    if (lacking.length > 0) {
      for (const leaf of lacking) problems.push({ path: leaf, message: missing(leaf, context) });
      continue;
    }
    const message = describe(issue, path, context);
    problems.push({ path, message: `${context.mode === 'embedded' ? withoutVariables(message) : message}${sourceNote(path)}` });
  }
  return problems;
}
