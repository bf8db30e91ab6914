/**
 * The generated part of docs/configuration.md: every key of the config, its default, its
 * environment variable and its meaning, from the zod schema (src/config/schema.ts) through the
 * derivations the agent itself uses (configFields, configEnvironmentVariables, the JSON Schema).
 */
import { configEnvironmentVariables, configFields, type ConfigField } from '../../src/config/fields.js';
import { buildConfigJsonSchema } from '../../src/config/json-schema.js';
import { SECRET_PATHS } from '../../src/config/schema.js';
import { table } from './blocks.js';

interface JsonSchemaNode {
  description?: string;
  default?: unknown;
  properties?: Record<string, JsonSchemaNode>;
  required?: string[];
  items?: JsonSchemaNode;
  oneOf?: JsonSchemaNode[];
  anyOf?: JsonSchemaNode[];
  const?: unknown;
  writeOnly?: boolean;
}

/** A default as people write it: `30m`, `true`, `[]`. */
function written(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** The default column: the value, `required`, or a dash. */
function defaultCell(field: ConfigField): string {
  if (field.default !== undefined) return field.default === '' ? '`""`' : `\`${written(field.default)}\``;
  if (field.required) return 'required';
  if (field.requiredWith !== undefined) return `required with \`${field.requiredWith}\``;
  return '-';
}

/**
 * The meaning column: the variable's description (what the field is, how to write it) without its
 * closing "Default: x." sentence, which has its own column.
 */
function meaning(field: ConfigField, description: string): string {
  let text = description;
  if (field.default !== undefined) {
    const suffix = ` Default: ${written(field.default)}.`;
    if (text.endsWith(suffix)) text = text.slice(0, -suffix.length);
  }
  // The default column says it.
  text = text.replace(/ Required(?: to use [^ ]+)?\.(?= |$)/, '');
  return field.secret ? `${text} **Secret.**` : text;
}

/** Sub-objects of a section (`stats.rest`), with their descriptions from the JSON Schema. */
function groups(node: JsonSchemaNode, path: string[]): string[] {
  const out: string[] = [];
  for (const [key, child] of Object.entries(node.properties ?? {})) {
    if (!child.properties) continue;
    out.push(`- \`${[...path, key].join('.')}\`: ${child.description ?? ''}`.trimEnd());
    out.push(...groups(child, [...path, key]));
  }
  return out;
}

/** The item tables of a list of objects (`votes.hooks`: one per hook kind). */
function itemTables(path: string, node: JsonSchemaNode): string[] {
  const items = node.items;
  if (!items) return [];
  const shapes = items.oneOf ?? items.anyOf ?? (items.properties ? [items] : []);
  return shapes.map((shape) => {
    const kind = shape.properties?.type?.const;
    const title = `Each item of \`${path}\`${kind === undefined ? '' : ` with \`"type": "${String(kind)}"\``}: ${shape.description ?? ''}.`;
    const rows = Object.entries(shape.properties ?? {}).map(([key, child]) => [
      `\`${key}\``,
      // The kind (`type`) is filled in from the other keys: its description says how.
      child.default !== undefined ? `\`${written(child.default)}\`` : shape.required?.includes(key) && child.const === undefined ? 'required' : '-',
      `${child.description ?? ''}${child.writeOnly ? ' **Secret.**' : ''}`,
    ]);
    return `${title}\n\n${table(['Key', 'Default', 'Meaning'], rows)}`;
  });
}

/** The block `config-keys`: one table per section of the config. */
export function renderConfigKeys(): string {
  const schema = buildConfigJsonSchema() as JsonSchemaNode;
  const variables = new Map(configEnvironmentVariables().map((variable) => [variable.path, variable]));
  const sections = new Map<string, ConfigField[]>();
  for (const field of configFields()) {
    const section = field.path[0]!;
    sections.set(section, [...(sections.get(section) ?? []), field]);
  }
  const parts: string[] = [];
  for (const [section, fields] of sections) {
    const node = schema.properties?.[section] ?? {};
    parts.push(`### \`${section}\`\n\n${node.description ?? ''}.`);
    const nested = groups(node, [section]);
    if (nested.length > 0) parts.push(nested.join('\n'));
    const rows = fields.map((field) => {
      const path = field.path.join('.');
      const variable = variables.get(path)!;
      return [`\`${path}\``, defaultCell(field), `\`${variable.name}\``, meaning(field, variable.description)];
    });
    parts.push(table(['Key', 'Default', 'Environment variable', 'Meaning'], rows));
    for (const field of fields.filter((f) => f.itemKeys)) {
      let node: JsonSchemaNode | undefined = schema;
      for (const key of field.path) node = node?.properties?.[key];
      if (node) parts.push(...itemTables(field.path.join('.'), node));
    }
  }
  return parts.join('\n\n');
}

/** The block `secret-paths`: every field whose value is a secret (masked, scrubbed from logs). */
export function renderSecretPaths(): string {
  const variables = new Map(configEnvironmentVariables().map((variable) => [variable.path, variable.name]));
  return [...SECRET_PATHS]
    .map((path) => {
      const field = path.replace(/\[\]$/, '');
      const variable = variables.get(field);
      return `- \`${path}\`${variable ? ` (\`${variable}\`)` : ''}`;
    })
    .join('\n');
}
