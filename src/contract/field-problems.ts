/**
 * The common currency of the request validators under `src/contract/`: a list of problems, each
 * naming the field it is about (`data[3].metrics.server_count`), so that the emulator's 422
 * `detail` and a client's pre-send check say the same thing.
 */

/** One rule a request broke. */
export interface FieldProblem {
  /**
   * Where in the request body: `headline.de`, `[2].options[0].name`, `data[3].metrics.server_count`.
   * Empty for the body as a whole.
   */
  path: string;
  /** What is wrong, starting lowercase (`must be an integer 0 or more`). */
  message: string;
}

/** The outcome of a validator: the typed value, or every problem found (never an empty list). */
export type Validated<T> = { ok: true; value: T } | { ok: false; problems: FieldProblem[] };

/** A failed {@link Validated} with one problem. */
export function invalid<T>(path: string, message: string): Validated<T> {
  return { ok: false, problems: [{ path, message }] };
}

/** A path segment: an object key or an array index. */
export type PathSegment = string | number;

/** Appends a segment to a path: `('data', 3)` gives `data[3]`, `('data[3]', 'metrics')` gives `data[3].metrics`. */
export function joinPath(base: string, segment: PathSegment): string {
  if (typeof segment === 'number') return `${base}[${segment}]`;
  return base === '' ? segment : `${base}.${segment}`;
}

/** Prefixes every problem's path with `base` (a batch entry's problems under `data[3].metrics`). */
export function underPath(base: string, problems: FieldProblem[]): FieldProblem[] {
  return problems.map((p) => {
    if (p.path === '') return { path: base, message: p.message };
    // An index path (`[2].name`) attaches without a dot.
    return { path: p.path.startsWith('[') ? `${base}${p.path}` : joinPath(base, p.path), message: p.message };
  });
}

/** How many problems {@link describeProblems} spells out by default before summarising the rest. */
const DESCRIBED_PROBLEMS_MAX = 10;

/**
 * One line for a 422 `detail`: `path: message; path: message`. The body as a whole is called
 * `body`. At most `max` problems are spelled out (default {@link DESCRIBED_PROBLEMS_MAX}); the rest
 * are counted, so a 100-command array cannot make the detail huge.
 */
export function describeProblems(problems: FieldProblem[], max: number = DESCRIBED_PROBLEMS_MAX): string {
  const shown = problems.slice(0, max).map((p) => `${p.path === '' ? 'body' : p.path}: ${p.message}`);
  const rest = problems.length - shown.length;
  return rest > 0 ? `${shown.join('; ')}; and ${rest} more problem${rest === 1 ? '' : 's'}` : shown.join('; ');
}

/** True for a JSON object (not null, not an array). */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Length in Unicode code points, so an emoji counts as one character (as in `webhook-url.ts`). */
export function charLength(text: string): number {
  let length = 0;
  // Counting without spreading keeps a 50,000-character page from allocating an array.
  for (const _ of text) length += 1;
  return length;
}

/** JSON type name for messages (`null`, `array`, `string`, ...). */
export function jsonTypeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

/**
 * Why `value` is not a string of `min` to `max` code points, or null when it is. Messages read
 * `must be a string of 3 to 140 characters (got 2)`.
 */
export function stringLengthProblem(value: unknown, min: number, max: number): string | null {
  const wanted = `a string of ${min} to ${max} characters`;
  if (typeof value !== 'string') return `must be ${wanted} (got ${jsonTypeName(value)})`;
  const length = charLength(value);
  if (length < min || length > max) return `must be ${wanted} (got ${length})`;
  return null;
}

/**
 * Problems for every key of `body` not in `allowed`: `path.key: is not a known field (allowed: ...)`.
 * `base` (default: the root) prefixes the paths.
 */
export function unknownKeyProblems(body: Record<string, unknown>, allowed: readonly string[], base = ''): FieldProblem[] {
  return Object.keys(body)
    .filter((key) => !allowed.includes(key))
    .map((key) => ({ path: joinPath(base, key), message: `is not a known field (allowed: ${allowed.join(', ')})` }));
}
