import { errorMessage } from '../errors.js';
/**
 * The state file's format, as pure functions: `{ "version": 1, "data": { key: value } }`.
 * Values are kept as JSON text in memory, so that a write is a string join and every `get` parses a
 * fresh copy that the caller may mutate freely.
 */

/** The format version this code writes and reads. */
const STATE_VERSION = 1;

/** The outcome of reading a state document. */
export type ParsedState =
  | { ok: true; entries: Map<string, string> }
  /** `newerVersion` is set when a later listing-agent wrote the file: it must not be replaced. */
  | { ok: false; reason: string; newerVersion?: number };

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Reads a state document; says why when it is not one. Never throws. */
export function parseStateDocument(text: string): ParsedState {
  if (text.trim() === '') return { ok: false, reason: 'the file is empty' };
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    return { ok: false, reason: `not JSON (${errorMessage(error)})` };
  }
  if (!isPlainObject(document)) return { ok: false, reason: 'not a JSON object' };
  const { version, data } = document;
  if (typeof version === 'number' && Number.isInteger(version) && version > STATE_VERSION) {
    return { ok: false, reason: `state version ${version} is newer than ${STATE_VERSION}`, newerVersion: version };
  }
  if (version !== STATE_VERSION)
    return { ok: false, reason: `"version" is ${JSON.stringify(version) ?? 'missing'}, expected ${STATE_VERSION}` };
  if (!isPlainObject(data)) return { ok: false, reason: '"data" is not an object' };
  const entries = new Map<string, string>();
  for (const [key, value] of Object.entries(data)) entries.set(key, JSON.stringify(value));
  return { ok: true, entries };
}

/** Writes a state document from values already in JSON text. */
export function serializeStateDocument(entries: ReadonlyMap<string, string>): string {
  const parts: string[] = [];
  for (const [key, json] of entries) parts.push(`${JSON.stringify(key)}:${json}`);
  return `{"version":${STATE_VERSION},"data":{${parts.join(',')}}}\n`;
}
