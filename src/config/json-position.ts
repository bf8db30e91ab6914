/**
 * Where a JSON text breaks, as a line and column with a reason that quotes nothing of the text.
 * V8's own messages are no use here: some carry no position, and some quote the text around the
 * mistake, which in a config file can be a token.
 */

/** The first syntax error of a JSON text. */
export interface JsonSyntaxError {
  /** 1-based. */
  line: number;
  /** 1-based, in UTF-16 code units. */
  column: number;
  reason: string;
}

/**
 * How deep a JSON text may nest. A config is a few levels deep (a command file a few more); a text
 * nested thousands of levels deep would overflow the stack of every recursive walk after the parse.
 */
export const MAX_JSON_DEPTH = 64;

class Stop {
  constructor(readonly offset: number, readonly reason: string) {}
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

function scan(text: string): void {
  let i = 0;
  let depth = 0;
  const fail = (reason: string, at = i): never => {
    throw new Stop(at, reason);
  };
  const space = () => {
    while (i < text.length && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++;
  };
  const string = () => {
    const start = i;
    i++;
    for (;;) {
      if (i >= text.length) fail('unterminated string (a missing closing ")', start);
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        i++;
        return;
      }
      if (c < 0x20) fail('a line break or control character inside a string (write \\n)');
      if (c === 0x5c) {
        const next = text[i + 1] ?? '';
        if (next === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) fail('a \\u escape needs four hex digits');
          i += 6;
        } else if ('"\\/bfnrt'.includes(next) && next !== '') {
          i += 2;
        } else {
          fail('an unknown escape in a string (a backslash is written \\\\)');
        }
      } else {
        i++;
      }
    }
  };
  const value = (): void => {
    space();
    if (i >= text.length) fail('unexpected end of file (an unclosed { or [?)');
    const c = text[i]!;
    if (c === '{') return container('}', true);
    if (c === '[') return container(']', false);
    if (c === '"') return string();
    for (const literal of ['true', 'false', 'null']) {
      if (text.startsWith(literal, i)) {
        i += literal.length;
        return;
      }
    }
    NUMBER.lastIndex = i;
    if (NUMBER.test(text)) {
      i = NUMBER.lastIndex;
      return;
    }
    if (c === "'") fail('strings need double quotes');
    if (c === '/') fail('JSON has no comments');
    fail('unexpected character (strings need double quotes)');
  };
  const container = (close: string, object: boolean): void => {
    if (++depth > MAX_JSON_DEPTH) fail(`nested more than ${MAX_JSON_DEPTH} levels deep`);
    i++;
    space();
    if (text[i] === close) {
      i++;
      depth--;
      return;
    }
    for (;;) {
      space();
      if (object) {
        if (text[i] !== '"') fail(i >= text.length ? 'unexpected end of file (an unclosed {?)' : 'expected a property name in double quotes');
        string();
        space();
        if (text[i] !== ':') fail('expected : after the property name');
        i++;
      }
      value();
      space();
      if (text[i] === ',') {
        const comma = i;
        i++;
        space();
        if (text[i] === close) fail(`a trailing comma before ${close}`, comma);
        continue;
      }
      if (text[i] === close) {
        i++;
        depth--;
        return;
      }
      fail(i >= text.length ? `unexpected end of file (a missing ${close}?)` : `expected , or ${close}`);
    }
  };
  value();
  space();
  if (i < text.length) fail('more content after the end of the JSON value');
}

/** The first syntax error of `text`, or undefined when it is valid JSON. */
export function locateJsonError(text: string): JsonSyntaxError | undefined {
  try {
    scan(text);
    return undefined;
  } catch (error) {
    if (!(error instanceof Stop)) throw error;
    const before = text.slice(0, error.offset);
    const lineStart = before.lastIndexOf('\n') + 1;
    return { line: before.split('\n').length, column: error.offset - lineStart + 1, reason: error.reason };
  }
}

/**
 * `JSON.parse` with a located error: `{ value }`, or `{ error }` with the line, column and a reason.
 * A leading byte order mark is ignored.
 */
export function parseJsonLocated(text: string): { value: unknown } | { error: JsonSyntaxError } {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  let value: unknown;
  try {
    value = JSON.parse(body) as unknown;
  } catch {
    // Our scanner and V8 agree on JSON; should they ever not, still say where to look.
    return { error: locateJsonError(body) ?? { line: 1, column: 1, reason: 'not valid JSON' } };
  }
  // Valid but absurdly deep: refused here, where the scanner can say where, before a walk overflows.
  if (deeperThan(value, MAX_JSON_DEPTH)) return { error: locateJsonError(body) ?? { line: 1, column: 1, reason: `nested more than ${MAX_JSON_DEPTH} levels deep` } };
  return { value };
}

/** Whether `value` nests objects and arrays more than `limit` levels deep (iterative: no recursion to overflow). */
function deeperThan(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (item === null || typeof item !== 'object') continue;
    if (depth + 1 > limit) return true;
    for (const child of Array.isArray(item) ? item : Object.values(item)) stack.push([child, depth + 1]);
  }
  return false;
}
