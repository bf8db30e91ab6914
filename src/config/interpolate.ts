import type { FieldIssue } from '../errors.js';

/**
 * `${VAR}` in the string values of a parsed config file. Pure: the environment comes in.
 *
 * - `"${VAR}"` (the whole value) with VAR unset or empty makes the field unset, so its default
 *   applies or its "missing" problem names VAR; an array item is dropped, so a second webhook
 *   secret can wait for its variable during a rotation.
 * - `"https://${HOST}/api"` (part of a value) with HOST unset or empty is a problem.
 * - `$${` is a literal `${`.
 * - An empty string is unset too, like an empty variable.
 */

/** The outcome of {@link interpolateConfig}. */
export interface Interpolated {
  /** The config with variables replaced and unset values removed. */
  value: unknown;
  problems: FieldIssue[];
  /** Paths made unset by a whole-value `${VAR}`, with the variable (for the "missing" message). */
  unsetVariables: Map<string, string>;
  /** Every variable that was read and set. */
  used: Set<string>;
  /** Every variable named by a `${VAR}`, set or not. */
  referenced: Set<string>;
}

const UNSET = Symbol('unset');
const WHOLE = /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$/;
const TOKEN = /\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$\{/g;

function childPath(parent: string, key: string | number): string {
  return typeof key === 'number' ? `${parent}[${key}]` : parent ? `${parent}.${key}` : key;
}

/** Replaces `${VAR}` in every string value of `input` (keys are left alone). */
export function interpolateConfig(input: unknown, env: Readonly<Record<string, string | undefined>>): Interpolated {
  const problems: FieldIssue[] = [];
  const unsetVariables = new Map<string, string>();
  const used = new Set<string>();
  const referenced = new Set<string>();
  const lookup = (name: string): string | undefined => {
    referenced.add(name);
    const value = env[name];
    return value === undefined || value === '' ? undefined : value;
  };

  const visitString = (text: string, path: string): string | typeof UNSET => {
    if (text === '') return UNSET;
    const whole = WHOLE.exec(text);
    if (whole && lookup(whole[1]!) === undefined) {
      unsetVariables.set(path, whole[1]!);
      return UNSET;
    }
    let broken = false;
    const result = text.replace(TOKEN, (match, name: string | undefined) => {
      if (match === '$${') return '${';
      if (name === undefined) {
        problems.push({ path, message: '`${` starts no variable: write ${NAME} (letters, digits, _) or $${ for a literal ${' });
        broken = true;
        return match;
      }
      const value = lookup(name);
      if (value === undefined) {
        problems.push({ path, message: `\${${name}} is not set (set ${name} in the environment or .env)` });
        broken = true;
        return match;
      }
      used.add(name);
      return value;
    });
    // A half-replaced value would only add a second, confusing problem at the same path.
    return broken ? UNSET : result;
  };

  const visit = (value: unknown, path: string): unknown => {
    if (typeof value === 'string') return visitString(value, path);
    if (Array.isArray(value)) {
      return value.map((item, index) => visit(item, childPath(path, index))).filter((item) => item !== UNSET);
    }
    if (value !== null && typeof value === 'object') {
      const out: Record<string, unknown> = {};
      for (const [key, child] of Object.entries(value)) {
        const replaced = visit(child, childPath(path, key));
        if (replaced !== UNSET) out[key] = replaced;
      }
      return out;
    }
    return value;
  };

  const value = visit(input, '');
  return { value: value === UNSET ? undefined : value, problems, unsetVariables, used, referenced };
}
