import { readFile as readFileFromDisk } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { FieldIssue } from '../errors.js';
import { parseDotenv } from './dotenv-file.js';
import { applyEnvironment } from './environment.js';
import { ConfigError, invalidConfigSummary } from './errors.js';
import { hookVariableProblems } from './hook-variables.js';
import { CONFIG_FILE_VARIABLE, configFields } from './fields.js';
import { interpolateConfig } from './interpolate.js';
import { parseJsonLocated } from './json-position.js';
import { describeIssues, isUnder } from './problems.js';
import { configSchema, SECRET_PATHS, type ListingAgentConfig, type ListingAgentConfigInput } from './schema.js';

/**
 * Where the configuration comes from, in order of precedence (highest first):
 * 1. `LISTING_AGENT_*` variables (real environment first, then `.env`);
 * 2. the JSON config file (`--config`, else `LISTING_AGENT_CONFIG`), with `${VAR}` interpolated;
 * 3. the schema's defaults.
 * Empty strings count as unset everywhere. Reading files is the only I/O, and it is injected.
 */

/** Options of {@link loadConfig}. */
export interface LoadConfigOptions {
  /** The config file (relative to `cwd`). Default: `LISTING_AGENT_CONFIG`; without it, none. */
  file?: string;
  /** The environment (the CLI passes a copy of `process.env`); it is never changed. */
  env: Readonly<Record<string, string | undefined>>;
  /** The working directory: relative paths and `.env` are found from here. */
  cwd: string;
  /** Reads a file as UTF-8. Default: `fs.promises.readFile`. */
  readFile?: (path: string) => Promise<string>;
}

/** What the configuration was built from (names only: no value, so nothing secret). */
export interface ConfigSources {
  /** The config file's absolute path, when there was one. */
  file?: string;
  /** The `.env` file's absolute path, when there was one. */
  dotenv?: string;
  /** The environment variables that were read: `LISTING_AGENT_*` and `${VAR}`s, sorted. */
  env: string[];
}

/** A loaded configuration. */
export interface LoadedConfig {
  /** Validated, with every default filled in. */
  config: ListingAgentConfig;
  /**
   * What was validated: the file with variables replaced and the environment laid over it. It
   * passed the schema, so it is what `createListingAgent`'s `config` takes, as the daemon does.
   */
  input: ListingAgentConfigInput;
  sources: ConfigSources;
}

/** The texts {@link buildConfig} works from; pure, for tests and for callers with their own I/O. */
export interface ConfigTexts {
  /** The config file as given (for messages) and its text. */
  file?: { name: string; text: string };
  /** The `.env` file's name (for messages) and its text. */
  dotenv?: { name: string; text: string };
  env: Readonly<Record<string, string | undefined>>;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** The environment with `.env` under it: a real value wins unless it is empty (empty is unset). */
function mergeDotenv(
  env: Readonly<Record<string, string | undefined>>,
  dotenv: Readonly<Record<string, string>>,
): Record<string, string | undefined> {
  const merged: Record<string, string | undefined> = { ...dotenv };
  for (const [key, value] of Object.entries(env)) {
    if (value !== undefined && value !== '') merged[key] = value;
    else if (!(key in merged)) merged[key] = value;
  }
  return merged;
}

/** The values of a `.env` file, or a {@link ConfigError} naming each line that is not `KEY=value`. */
function dotenvValues(dotenv: { name: string; text: string }): Record<string, string> {
  const parsed = parseDotenv(dotenv.text);
  if ('values' in parsed) return parsed.values;
  const [first] = parsed.badLines;
  const lines = parsed.badLines.length === 1 ? `line ${first} is` : `lines ${parsed.badLines.join(', ')} are`;
  throw new ConfigError(
    'dotenv',
    `malformed .env file ${dotenv.name}: ${lines} not KEY=value — write KEY=value, or start the line with # to make it a comment`,
    parsed.badLines.map((line) => ({ path: `${dotenv.name}:${line}`, message: 'not KEY=value' })),
  );
}

/** The value at a dotted path with `[i]` indexes (`webhooks.secrets`), or undefined. */
function valueAtPath(value: unknown, path: string): unknown {
  return path.split(/\.|(?=\[)/).reduce<unknown>((current, key) => {
    if (current === null || typeof current !== 'object') return undefined;
    return (current as Record<string, unknown>)[key.startsWith('[') ? key.slice(1, -1) : key];
  }, value);
}

/**
 * A secret written as `${VAR}` with VAR unset or empty is a problem naming VAR, not a field left
 * out (a hook called unsigned, a receiver without its secret). A required one is already
 * reported as missing, naming VAR; an item of a list of secrets (`webhooks.secrets`) is only left
 * out while another item is set (a second secret waiting for its variable during a rotation).
 */
function unsetSecretProblems(unsetVariables: ReadonlyMap<string, string>, value: unknown): FieldIssue[] {
  const problems: FieldIssue[] = [];
  for (const [path, variable] of unsetVariables) {
    const schemaPath = path.replace(/\[\d+\]/g, '[]');
    if (!SECRET_PATHS.has(schemaPath)) continue;
    const field = configFields().find((f) => f.path.join('.') === schemaPath.replace(/\[\]$/, ''));
    if (field?.required === true || field?.requiredWith !== undefined) continue;
    if (schemaPath.endsWith('[]')) {
      const rest = valueAtPath(value, path.replace(/\[\d+\]$/, ''));
      if (Array.isArray(rest) && rest.length > 0) continue;
    }
    problems.push({
      path,
      message: `\${${variable}} is empty or not set ` +
        `(set ${variable} in the environment or .env, or remove the field: a secret is not left out silently)`,
    });
  }
  return problems;
}

/**
 * Builds and validates the configuration from texts already read. Throws {@link ConfigError}
 * listing every problem at once.
 */
export function buildConfig(texts: ConfigTexts): { config: ListingAgentConfig; input: ListingAgentConfigInput; variables: string[] } {
  const env = texts.dotenv ? mergeDotenv(texts.env, dotenvValues(texts.dotenv)) : texts.env;

  let fileValue: unknown = {};
  if (texts.file) {
    const parsed = parseJsonLocated(texts.file.text);
    if ('error' in parsed) {
      const { line, column, reason } = parsed.error;
      const summary = `config file ${texts.file.name} is not valid JSON at ` +
        `line ${line}, column ${column}: ${reason} — fix it there (JSON allows no comments and no trailing commas)`;
      throw new ConfigError('file', summary, [{ path: '', message: summary }]);
    }
    if (!isObject(parsed.value)) {
      const summary = `config file ${texts.file.name} must hold a JSON object ({ "service": { ... } }) — see config.example.json`;
      throw new ConfigError('file', summary, [{ path: '', message: summary }]);
    }
    fileValue = parsed.value;
  }

  const interpolated = interpolateConfig(fileValue, env);
  const overlay = applyEnvironment(interpolated.value, env, interpolated.referenced);
  // A variable that sets a field settles it: a broken `${VAR}` under it no longer matters.
  const overridden = (path: string) => [...overlay.sources.keys()].some((field) => isUnder(path, field));
  const problems: FieldIssue[] = [...interpolated.problems.filter((p) => !overridden(p.path)), ...overlay.problems];
  const unsetVariables = new Map([...interpolated.unsetVariables].filter(([path]) => !overridden(path)));
  problems.push(...unsetSecretProblems(unsetVariables, overlay.value));

  const variables = new Set([...interpolated.used, ...overlay.sources.values()]);
  const result = configSchema.safeParse(overlay.value);
  if (result.success) problems.push(...hookVariableProblems(result.data, variables));
  else {
    problems.push(
      ...describeIssues(result.error.issues, {
        input: overlay.value,
        unsetVariables,
        environmentSources: overlay.sources,
        reported: problems.map((p) => p.path),
      }),
    );
  }
  if (problems.length > 0 || !result.success) {
    throw new ConfigError('invalid', invalidConfigSummary(problems), problems);
  }
  // The schema accepted this value, so it is a valid input (zod returns only the parsed output).
  return { config: result.data, input: overlay.value as ListingAgentConfigInput, variables: [...variables].sort() };
}

const READ_PROBLEMS: Record<string, string> = {
  ENOENT: 'no such file',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EISDIR: 'it is a directory',
};

function readProblem(error: unknown): { code: string | undefined; text: string } {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return { code, text: (code && READ_PROBLEMS[code]) ?? code ?? 'read failed' };
}

/**
 * Loads the configuration the way `listing-agent run` does: `.env` from `cwd`, the JSON file
 * (`file`, else `LISTING_AGENT_CONFIG`) with `${VAR}` interpolation, then `LISTING_AGENT_*`
 * variables over it, validated by the schema. Throws {@link ConfigError} (one-line `summary`,
 * every problem in `problems`). Neither `env` nor `process.env` is changed.
 */
export async function loadConfig(options: LoadConfigOptions): Promise<LoadedConfig> {
  const read = options.readFile ?? ((path: string) => readFileFromDisk(path, 'utf8'));

  const dotenvPath = resolve(options.cwd, '.env');
  let dotenv: ConfigTexts['dotenv'];
  try {
    dotenv = { name: dotenvPath, text: await read(dotenvPath) };
  } catch (error) {
    const problem = readProblem(error);
    // No `.env` is the usual case, not a problem.
    if (problem.code !== 'ENOENT') {
      const summary = `cannot read .env ` +
        `file ${dotenvPath}: ${problem.text} — make it readable by the user running listing-agent, or remove it`;
      throw new ConfigError('dotenv', summary, [{ path: '', message: summary }]);
    }
  }
  // Checked before the config file is looked for: `LISTING_AGENT_CONFIG` may come from `.env`.
  const env = dotenv ? mergeDotenv(options.env, dotenvValues(dotenv)) : options.env;
  const fromVariable = options.file === undefined || options.file === '';
  const name = fromVariable ? env[CONFIG_FILE_VARIABLE] || undefined : options.file;

  let file: ConfigTexts['file'];
  let filePath: string | undefined;
  if (name !== undefined) {
    filePath = resolve(options.cwd, name);
    try {
      file = { name, text: await read(filePath) };
    } catch (error) {
      const problem = readProblem(error);
      const fix =
        problem.code === 'ENOENT' || problem.code === 'EISDIR'
          ? fromVariable
            ? `set ${CONFIG_FILE_VARIABLE} to the path of your config file, or unset it and configure with LISTING_AGENT_* variables`
            : 'pass --config with the path of your config, or configure with LISTING_AGENT_* variables'
          : 'make it readable by the user running listing-agent';
      const summary = `cannot read config file ${name}: ${problem.text} — ${fix}`;
      throw new ConfigError('file', summary, [{ path: '', message: summary }]);
    }
  }

  const built = buildConfig(file ? { file, env } : { env });
  const sources: ConfigSources = { env: built.variables };
  if (filePath !== undefined) sources.file = filePath;
  if (dotenv) sources.dotenv = dotenvPath;
  return { config: built.config, input: built.input, sources };
}
