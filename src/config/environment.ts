import type { FieldIssue } from '../errors.js';
import { CONFIG_FILE_VARIABLE, configFields, environmentVariableName, type ConfigField } from './fields.js';
import { parseJsonLocated } from './json-position.js';
import { didYouMean } from './problems.js';

/**
 * `LISTING_AGENT_*` variables laid over the config file's values. Pure: the environment comes in,
 * the input is copied, never changed in place.
 */

/** The outcome of {@link applyEnvironment}. */
export interface EnvironmentOverlay {
  /** The input with every set variable written at its path. */
  value: Record<string, unknown>;
  problems: FieldIssue[];
  /** Field paths set from a variable, with the variable (`votes.pollInterval` -> its name). */
  sources: Map<string, string>;
}

const PREFIX = 'LISTING_AGENT_';

/** A variable's text as the field's value, or a problem that quotes nothing of the text. */
function parseEnvironmentValue(field: ConfigField, text: string): { value: unknown } | { problem: string } {
  switch (field.kind) {
    case 'boolean': {
      const word = text.trim().toLowerCase();
      if (['true', '1', 'yes'].includes(word)) return { value: true };
      if (['false', '0', 'no'].includes(word)) return { value: false };
      return { problem: 'must be true or false (also 1/0, yes/no)' };
    }
    case 'number': {
      const value = Number(text.trim());
      return text.trim() !== '' && Number.isFinite(value) ? { value } : { problem: 'must be a number' };
    }
    case 'list':
      return { value: text.split(',').map((item) => item.trim()).filter((item) => item !== '') };
    case 'json': {
      const parsed = parseJsonLocated(text);
      if ('value' in parsed) return parsed;
      const { line, column, reason } = parsed.error;
      return { problem: `is not valid JSON (line ${line}, column ${column}: ${reason})` };
    }
    default:
      return { value: text };
  }
}

function cloneObject(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? { ...(value as Record<string, unknown>) } : {};
}

/** Writes `value` at `path`, copying each object on the way (the caller's input stays as it was). */
function setAt(root: Record<string, unknown>, path: readonly string[], value: unknown): boolean {
  let parent = root;
  for (const key of path.slice(0, -1)) {
    const child = parent[key];
    // A section the file got wrong (`"stats": 5`) keeps its value, so its own problem shows.
    if (child !== undefined && (child === null || typeof child !== 'object' || Array.isArray(child))) return false;
    parent[key] = cloneObject(child);
    parent = parent[key] as Record<string, unknown>;
  }
  parent[path.at(-1)!] = value;
  return true;
}

/**
 * Lays every set (non-empty) `LISTING_AGENT_*` variable over `input`: variables win over the
 * file. A variable that matches no field is a problem with a did-you-mean, since a typo would
 * otherwise be silently ignored; `referenced` (the file's `${VAR}`s) are known too, so a file may
 * name its own variables with the prefix.
 */
export function applyEnvironment(
  input: unknown,
  env: Readonly<Record<string, string | undefined>>,
  referenced: ReadonlySet<string> = new Set(),
): EnvironmentOverlay {
  const value = cloneObject(input);
  const problems: FieldIssue[] = [];
  const sources = new Map<string, string>();
  const names = new Set<string>([CONFIG_FILE_VARIABLE]);
  for (const field of configFields()) {
    const name = environmentVariableName(field.path);
    names.add(name);
    const text = env[name];
    if (text === undefined || text === '') continue;
    const path = field.path.join('.');
    const parsed = parseEnvironmentValue(field, text);
    if ('problem' in parsed) {
      problems.push({ path, message: `${parsed.problem} (from ${name})` });
      continue;
    }
    if (setAt(value, field.path, parsed.value)) sources.set(path, name);
  }
  for (const [name, text] of Object.entries(env)) {
    if (!name.startsWith(PREFIX) || names.has(name) || referenced.has(name) || text === undefined || text === '') continue;
    const suggestion = didYouMean(name.slice(PREFIX.length), [...names].map((known) => known.slice(PREFIX.length)));
    problems.push({
      path: name,
      message: `unknown variable${suggestion ? ` (did you mean ${PREFIX}${suggestion}?)` : ''}: fix its name or remove it`,
    });
  }
  return { value, problems, sources };
}
