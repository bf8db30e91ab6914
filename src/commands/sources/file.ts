import { readFile as readFileFromDisk } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parseJsonLocated } from '../../config/json-position.js';
import type { CommandLoad, CommandSource } from '../types.js';
import { errorMessage } from '../../errors.js';

/** Options of {@link createFileCommandsSource}. */
export interface FileCommandsSourceOptions {
  /** The JSON file (`commands.file`), absolute or relative to `cwd`. */
  path: string;
  /** Where a relative `path` starts. Default: the process's working directory. */
  cwd?: string;
  /** Reads the file as UTF-8 text. Default: `fs.promises.readFile`. Tests pass their own. */
  readFile?: (path: string, signal?: AbortSignal) => Promise<string>;
}

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  return Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** Why the file could not be read, by errno code; never the file's content. */
function readProblem(error: unknown, shown: string, resolved: string): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT') return `the commands file ${shown} does not exist (looked for ${resolved}): create it, or fix commands.file`;
  if (code === 'EISDIR') return `the commands file ${shown} is a directory, not a JSON file`;
  if (code === 'EACCES' || code === 'EPERM') return `the commands file ${shown} cannot be read: permission denied`;
  if (error instanceof Error && error.name === 'AbortError') return `reading the commands file ${shown} was aborted`;
  const message = errorMessage(error);
  return `the commands file ${shown} cannot be read: ${code && !message.includes(code) ? `${code} ` : ''}${message}`;
}

/**
 * Commands from a JSON file: an array of command objects (Discord's form, as
 * `GET /applications/{id}/commands` answers or a builder's `toJSON()` writes), or an object
 * `{ "commands": [...] }`. The file is read at each load, so an edit is picked up by the next sync.
 * A missing or unreadable file, bad JSON (reported by line and column, without quoting the text)
 * or another shape answers `{ ok: false, reason }` naming the file; `load()` never throws.
 */
export function createFileCommandsSource(options: FileCommandsSourceOptions): CommandSource {
  const resolved = options.cwd === undefined ? resolve(options.path) : resolve(options.cwd, options.path);
  const read =
    options.readFile ??
    ((path: string, signal?: AbortSignal) => readFileFromDisk(path, { encoding: 'utf8', ...(signal ? { signal } : {}) }));
  const shown = options.path;

  async function load(signal?: AbortSignal): Promise<CommandLoad> {
    let text: string;
    try {
      text = await read(resolved, signal);
    } catch (error) {
      return { ok: false, reason: readProblem(error, shown, resolved) };
    }
    const parsed = parseJsonLocated(text);
    if ('error' in parsed) {
      const { line, column, reason } = parsed.error;
      return {
        ok: false,
        reason: `the commands ` +
          `file ${shown} is not valid JSON at line ${line}, column ${column}: ${reason} (JSON allows no comments and no trailing commas)`,
      };
    }
    const value = parsed.value;
    if (Array.isArray(value)) return { ok: true, commands: value };
    if (typeof value === 'object' && value !== null && Array.isArray((value as Record<string, unknown>).commands)) {
      return { ok: true, commands: (value as { commands: unknown[] }).commands };
    }
    const got =
      typeof value === 'object' && value !== null && !Array.isArray(value) ? 'an object without a "commands" array' : jsonType(value);
    return {
      ok: false,
      reason: `the commands file ${shown} must hold a JSON array of command objects, or { "commands": [...] } (got ${got})`,
    };
  }

  return { description: `file ${shown}`, load };
}
