/**
 * What counts as a warning printed by a runtime, for the smoke tests (test/runtimes/) and the
 * runtime matrix (scripts/runtime-matrix.ts), which fail on any: Node's `(node:123) SomeWarning:`
 * lines (deprecations `[DEP0040]` included), and Bun's `warn:` lines.
 */
const WARNING = /\(node:\d+\) (\[\w+\] )?\w*Warning\b|^\s*warn(ing)?:|\b(Deprecation|Experimental|TimeoutOverflow|TimeoutNegative|TimeoutNaN)Warning\b/i;

/** The warning lines of `text` (stdout and stderr of a program). */
export function warningLines(text: string): string[] {
  return text.split('\n').filter((line) => WARNING.test(line));
}
