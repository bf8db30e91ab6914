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
const LITERALS = ['true', 'false', 'null'];

/**
 * A recursive-descent pass over a JSON text that only checks it: it throws a {@link Stop} at the
 * first mistake, with the offset to point at and a reason in words. Why this is ours and not
 * `jsonc-parser` or `json-source-map`: docs/decisions/less-by-hand.md.
 */
class Scanner {
  private i = 0;
  private depth = 0;

  constructor(private readonly text: string) {}

  /** Checks the whole text: one value, nothing after it but white space. */
  document(): void {
    this.value();
    this.space();
    if (this.i < this.text.length) this.fail('more content after the end of the JSON value');
  }

  private fail(reason: string, at = this.i): never {
    throw new Stop(at, reason);
  }

  private space(): void {
    const { text } = this;
    while (this.i < text.length && (text[this.i] === ' ' || text[this.i] === '\t' || text[this.i] === '\n' || text[this.i] === '\r'))
      this.i++;
  }

  private value(): void {
    this.space();
    const { text } = this;
    if (this.i >= text.length) this.fail('unexpected end of file (an unclosed { or [?)');
    const c = text[this.i]!;
    if (c === '{') return this.container('}', true);
    if (c === '[') return this.container(']', false);
    if (c === '"') return this.string();
    const literal = LITERALS.find((word) => text.startsWith(word, this.i));
    if (literal !== undefined) {
      this.i += literal.length;
      return;
    }
    NUMBER.lastIndex = this.i;
    if (NUMBER.test(text)) {
      this.i = NUMBER.lastIndex;
      return;
    }
    if (c === "'") this.fail('strings need double quotes');
    if (c === '/') this.fail('JSON has no comments');
    this.fail('unexpected character (strings need double quotes)');
  }

  private string(): void {
    const start = this.i;
    this.i++;
    for (;;) {
      if (this.i >= this.text.length) this.fail('unterminated string (a missing closing ")', start);
      const c = this.text.charCodeAt(this.i);
      if (c === 0x22) {
        this.i++;
        return;
      }
      if (c < 0x20) this.fail('a line break or control character inside a string (write \\n)');
      if (c === 0x5c) this.escape();
      else this.i++;
    }
  }

  /** A backslash and what follows it, inside a string. */
  private escape(): void {
    const next = this.text[this.i + 1] ?? '';
    if (next === 'u') {
      if (!/^[0-9a-fA-F]{4}$/.test(this.text.slice(this.i + 2, this.i + 6))) this.fail('a \\u escape needs four hex digits');
      this.i += 6;
    } else if ('"\\/bfnrt'.includes(next) && next !== '') {
      this.i += 2;
    } else {
      this.fail('an unknown escape in a string (a backslash is written \\\\)');
    }
  }

  /** An object (`object`: members are `"name": value`) or an array, from its opening bracket. */
  private container(close: string, object: boolean): void {
    if (++this.depth > MAX_JSON_DEPTH) this.fail(`nested more than ${MAX_JSON_DEPTH} levels deep`);
    this.i++;
    this.space();
    if (this.text[this.i] !== close) {
      while (this.member(close, object));
    }
    this.i++;
    this.depth--;
  }

  /** One member and the comma after it; true when another member follows, false at `close`. */
  private member(close: string, object: boolean): boolean {
    const { text } = this;
    this.space();
    if (object) {
      if (text[this.i] !== '"')
        this.fail(this.i >= text.length ? 'unexpected end of file (an unclosed {?)' : 'expected a property name in double quotes');
      this.string();
      this.space();
      if (text[this.i] !== ':') this.fail('expected : after the property name');
      this.i++;
    }
    this.value();
    this.space();
    if (text[this.i] === ',') {
      const comma = this.i;
      this.i++;
      this.space();
      if (text[this.i] === close) this.fail(`a trailing comma before ${close}`, comma);
      return true;
    }
    if (text[this.i] === close) return false;
    return this.fail(this.i >= text.length ? `unexpected end of file (a missing ${close}?)` : `expected , or ${close}`);
  }
}

/** The first syntax error of `text`, or undefined when it is valid JSON. */
export function locateJsonError(text: string): JsonSyntaxError | undefined {
  try {
    new Scanner(text).document();
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
  if (deeperThan(value, MAX_JSON_DEPTH))
    return { error: locateJsonError(body) ?? { line: 1, column: 1, reason: `nested more than ${MAX_JSON_DEPTH} levels deep` } };
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
