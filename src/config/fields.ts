import { z } from 'zod';
import { configSchema, SECRET_PATHS } from './schema.js';
import { environmentVariableName } from './setting-names.js';

/**
 * The config's leaf fields, found by walking the zod schema, so that a field added to the schema
 * gets its environment variable, its documentation row and its masking without a second list to
 * keep in step.
 */

/** How a field is written in an environment variable. */
export type FieldKind = 'string' | 'enum' | 'boolean' | 'number' | 'list' | 'json';

/** One leaf of the configuration (an object inside an array is a `json` leaf, not walked). */
export interface ConfigField {
  /** Keys from the root (`['votes', 'pollInterval']`). */
  path: string[];
  kind: FieldKind;
  /** The schema's descriptions from the outermost wrapper in, without the generic secret note. */
  descriptions: string[];
  /** Whether the value (or each item of a list) is a secret. */
  secret: boolean;
  /** Whether the config is invalid without it (no default, not optional). */
  required: boolean;
  /** The optional section this field is required in, once that section is set (`state.redis`). */
  requiredWith?: string;
  /** The default as written, when the schema has one. */
  default?: unknown;
  /** The allowed values of an `enum`. */
  options?: readonly string[];
  /** The keys of the objects in a `json` array (`votes.hooks`: url, authorization, timeout). */
  itemKeys?: readonly string[];
}

type Schema = z.core.$ZodType;

// The generic note `secret()` attaches in schema.ts: the `secret` flag says it better.
const SECRET_NOTE = /^secret: /;

function descriptionOf(schema: Schema): string | undefined {
  const text = z.globalRegistry.get(schema)?.description;
  return text && !SECRET_NOTE.test(text) ? text : undefined;
}

/**
 * Peels the wrappers that do not change how a value is written (optional, default, prefault,
 * the input side of a transform pipe), collecting descriptions and the default on the way.
 */
function unwrap(schema: Schema): { inner: Schema; descriptions: string[]; default?: unknown; optional: boolean } {
  const descriptions: string[] = [];
  let optional = false;
  let found: { value: unknown } | undefined;
  let current = schema;
  for (;;) {
    const text = descriptionOf(current);
    if (text !== undefined && !descriptions.includes(text)) descriptions.push(text);
    if (current instanceof z.ZodDefault || current instanceof z.ZodPrefault) {
      found ??= { value: current.def.defaultValue };
      optional = true;
      current = current.def.innerType;
    } else if (current instanceof z.ZodOptional || current instanceof z.ZodNullable || current instanceof z.ZodReadonly) {
      optional ||= !(current instanceof z.ZodReadonly);
      current = current.def.innerType;
    } else if (current instanceof z.ZodPipe) {
      // What people write is the pipe's input; the output is what the code reads. A preprocess
      // step (a transform first) only fills in what was left out: what people write is its output.
      current = current.def.in instanceof z.ZodTransform ? current.def.out : current.def.in;
    } else {
      return found ? { inner: current, descriptions, optional, default: found.value } : { inner: current, descriptions, optional };
    }
  }
}

/** The object shapes a schema accepts: one for an object, one per option for a union of objects. */
function objectShapes(schema: Schema): Record<string, Schema>[] {
  if (schema instanceof z.ZodObject) return [schema.shape];
  if (schema instanceof z.ZodUnion) return schema.def.options.flatMap((option) => objectShapes(unwrap(option).inner));
  return [];
}

function leafKind(schema: Schema): FieldKind {
  if (schema instanceof z.ZodBoolean) return 'boolean';
  if (schema instanceof z.ZodNumber) return 'number';
  if (schema instanceof z.ZodEnum) return 'enum';
  if (schema instanceof z.ZodString) return 'string';
  if (schema instanceof z.ZodArray) {
    const item = leafKind(unwrap(schema.def.element).inner);
    return item === 'string' || item === 'enum' ? 'list' : 'json';
  }
  return 'json';
}

function walk(schema: Schema, path: string[], out: ConfigField[], inOptional = false): void {
  const { inner, descriptions, default: fallback, optional } = unwrap(schema);
  if (inner instanceof z.ZodObject) {
    for (const [key, child] of Object.entries(inner.shape)) {
      // `$schema` only points editors at config.schema.json; it configures nothing.
      if (path.length === 0 && key === '$schema') continue;
      // A field of an optional section (state.redis) is required only once the section is used.
      walk(child, [...path, key], out, inOptional || (optional && fallback === undefined));
    }
    return;
  }
  const kind = leafKind(inner);
  const dotted = path.join('.');
  const field: ConfigField = {
    path,
    kind,
    descriptions,
    secret: SECRET_PATHS.has(dotted) || SECRET_PATHS.has(`${dotted}[]`),
    required: !optional && !inOptional,
  };
  if (!optional && inOptional) field.requiredWith = path.slice(0, -1).join('.');
  if (fallback !== undefined) field.default = fallback;
  if (inner instanceof z.ZodEnum) field.options = inner.options.map(String);
  if (inner instanceof z.ZodArray) {
    const shapes = objectShapes(unwrap(inner.def.element).inner);
    if (shapes.length > 0) field.itemKeys = [...new Set(shapes.flatMap((shape) => Object.keys(shape)))];
  }
  out.push(field);
}

let cachedFields: readonly ConfigField[] | undefined;

/** Every leaf field of the configuration, in schema order. */
export function configFields(): readonly ConfigField[] {
  if (!cachedFields) {
    const out: ConfigField[] = [];
    walk(configSchema, [], out);
    cachedFields = out;
  }
  return cachedFields;
}

/**
 * The schema at a path (`['votes', 'hooks', '[]', 'url']`, `[]` stepping into array items), with
 * its wrappers peeled; undefined when the path leaves the schema.
 */
export function schemaAt(path: readonly string[]): Schema | undefined {
  let current: Schema = configSchema;
  for (const key of path) {
    const { inner } = unwrap(current);
    if (key === '[]' && inner instanceof z.ZodArray) {
      current = inner.def.element;
      continue;
    }
    // In a union of objects (the hook kinds), the first option that has the key answers.
    const shape = objectShapes(inner).find((candidate) => Object.hasOwn(candidate, key));
    if (!shape) return undefined;
    current = shape[key]!;
  }
  return unwrap(current).inner;
}

/** The keys an object at `path` accepts (empty when `path` is not an object). */
export function knownKeys(path: readonly string[]): string[] {
  const schema = schemaAt(path);
  return schema ? [...new Set(objectShapes(schema).flatMap((shape) => Object.keys(shape)))] : [];
}

/** The environment variable of a field (config/setting-names.ts, which needs no schema). */
export { environmentVariableName };

/** The variable that names the config file when `--config` is absent. */
export const CONFIG_FILE_VARIABLE = 'LISTING_AGENT_CONFIG';

/** One environment variable of the configuration, for docs and tests. */
export interface ConfigEnvironmentVariable {
  /** `LISTING_AGENT_SERVICE_TOKEN` */
  name: string;
  /** The field it sets: `service.token`. */
  path: string;
  /** What the field is, how to write it in the variable, and its default. */
  description: string;
  /** Whether the value is a secret (masked in every printout). */
  secret: boolean;
  /** How the value is read: `string`, `enum`, `boolean`, `number`, `list` (comma-separated), `json`. */
  kind: FieldKind;
}

function sentence(text: string): string {
  const trimmed = text.trim();
  return /[.!?]$/.test(trimmed) ? trimmed : `${trimmed}.`;
}

function formatHint(field: ConfigField): string | undefined {
  switch (field.kind) {
    case 'boolean':
      return 'true or false (also 1/0, yes/no)';
    case 'enum':
      return `one of ${field.options!.join(', ')}`;
    case 'list':
      return 'comma-separated';
    case 'json':
      return field.itemKeys ? `a JSON array of objects with ${field.itemKeys.join(', ')}` : 'JSON';
    default:
      return undefined;
  }
}

// "What it is. Format: how to write it. Default: x." The schema's outermost description says what
// the field is; inner ones (a duration's range, a listen address's forms) say how to write it.
function describeField(field: ConfigField): string {
  const [what, ...forms] = field.descriptions;
  const hint = formatHint(field);
  const parts = what ? [sentence(what)] : [];
  if (field.required) parts.push('Required.');
  if (field.requiredWith !== undefined) parts.push(`Required to use ${field.requiredWith}.`);
  const format = [...forms, ...(hint ? [hint] : [])].map((text) => text.replace(/\.$/, ''));
  if (format.length > 0) parts.push(`Format: ${format.join('; ')}.`);
  if (field.default !== undefined && !(Array.isArray(field.default) && field.default.length === 0)) {
    parts.push(`Default: ${typeof field.default === 'string' ? field.default : JSON.stringify(field.default)}.`);
  }
  return parts.join(' ');
}

/**
 * Every `LISTING_AGENT_*` variable that sets a config field, derived from the schema (the README's
 * table is checked against it). `LISTING_AGENT_CONFIG` (the file) is not a field and not listed.
 */
export function configEnvironmentVariables(): ConfigEnvironmentVariable[] {
  return configFields().map((field) => ({
    name: environmentVariableName(field.path),
    path: field.path.join('.'),
    description: describeField(field),
    secret: field.secret,
    kind: field.kind,
  }));
}
