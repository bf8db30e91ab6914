/**
 * `npm run lint:sizes`: units a person reads in one sitting. Lists every TypeScript file over
 * {@link SIZE_LIMITS.fileLines} lines, every function-like unit (function, method, arrow,
 * accessor, constructor) spanning over {@link SIZE_LIMITS.functionLines} lines, and every line
 * over {@link SIZE_LIMITS.lineWidth} characters, with `file:line` and a name, and exits 1 when
 * there is any. A factory counts whole: `createX() { ...inner functions... }` spans all its lines,
 * the inner functions included, so a closure cannot hide its size in its helpers. Comments before
 * a unit do not count; those inside it do.
 *
 * The line width: a line's characters are its Unicode code points (a tab is one, the newline
 * none), and every line counts, code, comments and strings alike: wrap a long message into
 * `'...' +` parts.
 *
 * Runs from the TypeScript sources (no build): node --import ./test/helpers/ts-register.mjs
 * scripts/check-sizes.ts [paths...] (default `src`). test/architecture/sizes.check.ts runs the same
 * check in `npm run check`.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/** The limits: ~400 lines a file, ~80 a function, 140 characters a line (docs/architecture.md). */
export const SIZE_LIMITS = { fileLines: 400, functionLines: 80, lineWidth: 140 } as const;

/** One unit over its limit. */
export interface SizeOffender {
  kind: 'file' | 'function' | 'line';
  /** The path as given (relative to the working directory when found under a directory). */
  file: string;
  /** 1-based line where the unit starts (1 for a file). */
  line: number;
  /** The function's name (`<anonymous in f>` when it has none, inside `f`), `(file)` or `(line)`. */
  name: string;
  /** Lines of the file or function; characters of the line. */
  lines: number;
  limit: number;
}

/** Lines of a text as an editor counts them: a final newline ends the last line, it does not start one. */
function lineCount(text: string): number {
  if (text === '') return 0;
  let lines = 1;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) lines += 1;
  return text.endsWith('\n') ? lines - 1 : lines;
}

/** What a reader would call the unit: its own name, the variable or property it is assigned to, else where it sits. */
function nameOf(node: ts.SignatureDeclaration, enclosing: string | undefined): string {
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  if (node.name !== undefined) return node.name.getText();
  const parent = node.parent;
  if ((ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) && parent.name !== undefined) return parent.name.getText();
  if (ts.isBinaryExpression(parent) && parent.operatorToken.kind === ts.SyntaxKind.EqualsToken) return parent.left.getText();
  return enclosing === undefined ? '<anonymous>' : `<anonymous in ${enclosing}>`;
}

/** Every line of `text` over `limit` characters (code points). */
export function wideLines(file: string, text: string, limit: number = SIZE_LIMITS.lineWidth): SizeOffender[] {
  const offenders: SizeOffender[] = [];
  text.split('\n').forEach((line, index) => {
    const width = [...line].length;
    if (width > limit) offenders.push({ kind: 'line', file, line: index + 1, name: '(line)', lines: width, limit });
  });
  return offenders;
}

/** The offenders of one source text (`file` names it in the result). */
export function checkSource(file: string, text: string, limits: typeof SIZE_LIMITS = SIZE_LIMITS): SizeOffender[] {
  const offenders: SizeOffender[] = [];
  const lines = lineCount(text);
  if (lines > limits.fileLines) offenders.push({ kind: 'file', file, line: 1, name: '(file)', lines, limit: limits.fileLines });
  offenders.push(...wideLines(file, text, limits.lineWidth));
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const lineOf = (position: number) => source.getLineAndCharacterOfPosition(position).line + 1;
  const visit = (node: ts.Node, enclosing: string | undefined): void => {
    let inside = enclosing;
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const name = nameOf(node, enclosing);
      const start = lineOf(node.getStart(source));
      const span = lineOf(node.getEnd()) - start + 1;
      if (span > limits.functionLines) offenders.push({ kind: 'function', file, line: start, name, lines: span, limit: limits.functionLines });
      inside = name;
    }
    ts.forEachChild(node, (child) => visit(child, inside));
  };
  visit(source, undefined);
  return offenders;
}

/** `.ts` files under `path` (a file or a directory), declaration files left out, in a stable order. */
function sourceFiles(path: string): string[] {
  if (!statSync(path).isDirectory()) return [path];
  const found: string[] = [];
  for (const entry of readdirSync(path, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const full = join(path, entry.name);
    if (entry.isDirectory()) found.push(...sourceFiles(full));
    else if (/\.(c|m)?tsx?$/.test(entry.name) && !/\.d\.(c|m)?ts$/.test(entry.name)) found.push(full);
  }
  return found;
}

const KIND_ORDER = { file: 0, function: 1, line: 2 } as const;

/**
 * The offenders of every TypeScript file under `paths`: files first, then functions, then lines,
 * each by place.
 */
export function checkSizes(paths: readonly string[], limits: typeof SIZE_LIMITS = SIZE_LIMITS): SizeOffender[] {
  const offenders = paths.flatMap(sourceFiles).flatMap((file) => {
    const shown = relative(process.cwd(), file) || file;
    return checkSource(shown, readFileSync(file, 'utf8'), limits);
  });
  return offenders.sort((a, b) => KIND_ORDER[a.kind] - KIND_ORDER[b.kind] || a.file.localeCompare(b.file) || a.line - b.line);
}

/** One line per offender: `src/x.ts:12 createX: 96 lines (limit 80)`, `src/x.ts:7 line: 163 characters (limit 140)`. */
export function formatOffender(offender: SizeOffender): string {
  const what = offender.kind === 'function' ? offender.name : offender.kind;
  const unit = offender.kind === 'line' ? 'characters' : 'lines';
  return `${offender.file}:${offender.line} ${what}: ${offender.lines} ${unit} (limit ${offender.limit})`;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const paths = process.argv.slice(2);
  const offenders = checkSizes(paths.length > 0 ? paths : ['src'], SIZE_LIMITS);
  for (const offender of offenders) console.log(formatOffender(offender));
  const { fileLines, functionLines, lineWidth } = SIZE_LIMITS;
  if (offenders.length > 0) {
    console.log(
      `${offenders.length} unit(s) over the size limits: ` +
        `split files over ${fileLines} lines and functions over ${functionLines}, wrap lines over ${lineWidth} characters.`,
    );
  }
  if (offenders.length > 0) process.exitCode = 1;
  else console.log(`sizes: every file within ${fileLines} lines, every function within ${functionLines}, every line within ${lineWidth} characters.`);
}
