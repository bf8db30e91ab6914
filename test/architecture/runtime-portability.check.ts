import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * Rules of src/ that keep the package loadable and quiet on every runtime it supports, and the
 * process its own:
 *
 * - No top-level await: CommonJS bots load the ES module build with `require()` (dist/cjs/), and
 *   Node's require of ES modules refuses a graph with a top-level await (ERR_REQUIRE_ASYNC_MODULE).
 * - Every computed timer delay goes through `timerDelay()` (src/contract/timer-delay.ts): a delay
 *   over 2^31 - 1 ms becomes 1 ms with a TimeoutOverflowWarning, a negative one warns on Node 24+.
 *   A delay may be a literal, a constant expression of literals, or a name or property (a value
 *   set and bounded elsewhere); anything computed right there (arithmetic, a call) must be clamped.
 * - No V8 tuning at run time: no `node:v8` (`setFlagsFromString`) or `node:vm` (a `gc()` made
 *   reachable). The container and the systemd unit set the daemon's start flags.
 */

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

function sourceFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => join(entry.parentPath, entry.name));
}

function parse(file: string, text: string): ts.SourceFile {
  return ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS);
}

const where = (source: ts.SourceFile, node: ts.Node) => `${source.fileName}:${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1}`;

/** `file:line` of every `await` (and `for await`) outside any function of `source`. */
export function topLevelAwaits(source: ts.SourceFile): string[] {
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) || ts.isClassStaticBlockDeclaration(node)) return;
    if (ts.isAwaitExpression(node) || (ts.isForOfStatement(node) && node.awaitModifier)) found.push(where(source, node));
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** A delay that needs no clamp: a number literal, or arithmetic of number literals only. */
function isConstant(node: ts.Expression): boolean {
  if (ts.isNumericLiteral(node)) return true;
  if (ts.isParenthesizedExpression(node)) return isConstant(node.expression);
  if (ts.isBinaryExpression(node)) return isConstant(node.left) && isConstant(node.right);
  return false;
}

function delayIsFine(node: ts.Expression): boolean {
  if (isConstant(node) || ts.isIdentifier(node) || ts.isPropertyAccessExpression(node)) return true;
  return ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'timerDelay';
}

/** The local names of `setTimeout`/`setInterval` imported from node:timers/promises (delay first). */
function promiseTimerNames(source: ts.SourceFile): Set<string> {
  const names = new Set<string>();
  for (const statement of source.statements) {
    if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier)) continue;
    if (!/^(node:)?timers\/promises$/.test(statement.moduleSpecifier.text)) continue;
    const bindings = statement.importClause?.namedBindings;
    if (!bindings || !ts.isNamedImports(bindings)) continue;
    for (const element of bindings.elements) {
      if (['setTimeout', 'setInterval'].includes((element.propertyName ?? element.name).text)) names.add(element.name.text);
    }
  }
  return names;
}

/** `file:line delay` of every timer armed with a delay computed in place and not clamped. */
export function unclampedDelays(source: ts.SourceFile): string[] {
  const promiseTimers = promiseTimerNames(source);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression)) {
      const name = node.expression.text;
      const delay = promiseTimers.has(name) ? node.arguments[0] : ['setTimeout', 'setInterval'].includes(name) ? node.arguments[1] : undefined;
      if (delay && !delayIsFine(delay)) found.push(`${where(source, node)} ${delay.getText(source)}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/**
 * `file:line module` of every import of `node:v8` or `node:vm` (static, `import()`, `require()`):
 * the modules through which code sets V8's flags at run time (`setFlagsFromString`) or reaches a
 * `gc()` it was not started with. Process-wide V8 settings belong to the command that starts the
 * process (the Dockerfile's ENTRYPOINT, the systemd unit's ExecStart), not to the package.
 */
export function v8Reaches(source: ts.SourceFile): string[] {
  const found: string[] = [];
  const check = (node: ts.Node, specifier: ts.Expression | undefined) => {
    if (specifier && ts.isStringLiteral(specifier) && /^(node:)?(v8|vm)$/.test(specifier.text)) found.push(`${where(source, node)} ${specifier.text}`);
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) check(node, node.moduleSpecifier);
    if (ts.isCallExpression(node) && (node.expression.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(node.expression) && node.expression.text === 'require'))) {
      check(node, node.arguments[0]);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function checkTree(check: (source: ts.SourceFile) => string[]): string[] {
  return sourceFiles(join(REPO, 'src')).flatMap((file) => check(parse(relative(REPO, file), readFileSync(file, 'utf8'))));
}

describe('src/ loads with require() on every runtime', () => {
  it('has no top-level await', () => {
    expect(checkTree(topLevelAwaits)).toEqual([]);
  });

  it('finds a top-level await, and none inside functions', () => {
    const text = 'const a = await f();\nfor await (const x of y) g(x);\nasync function h() { await f(); }\nconst i = async () => { for await (const x of y) g(x); };\n';
    expect(topLevelAwaits(parse('planted.ts', text))).toEqual(['planted.ts:1', 'planted.ts:2']);
  });
});

describe('timer delays are clamped', () => {
  it('every computed delay in src/ goes through timerDelay()', () => {
    expect(checkTree(unclampedDelays)).toEqual([]);
  });

  it('finds a computed delay, and lets literals, names and timerDelay() pass', () => {
    const text = [
      "import { setTimeout as delay } from 'node:timers/promises';",
      'setTimeout(f, deadline - now());',
      'setInterval(f, Math.max(10, ms / 3));',
      'await delay(a + b);',
      'setTimeout(f, 2 ** 31 - 1);',
      'setTimeout(f, options.timeoutMs);',
      'setTimeout(f, delayMs);',
      'setTimeout(f, timerDelay(deadline - now()));',
      'await delay(timerDelay(ms));',
    ].join('\n');
    expect(unclampedDelays(parse('planted.ts', text))).toEqual(['planted.ts:2 deadline - now()', 'planted.ts:3 Math.max(10, ms / 3)', 'planted.ts:4 a + b']);
  });
});

describe('V8 is the start command\'s to tune', () => {
  it('src/ imports neither node:v8 nor node:vm: no V8 flag set at run time, no forced collection', () => {
    expect(checkTree(v8Reaches)).toEqual([]);
  });

  it('finds node:v8 and node:vm however they are imported, and nothing else', () => {
    const text = [
      "import { setFlagsFromString } from 'node:v8';",
      "import * as vm from 'vm';",
      "import { readFile } from 'node:fs/promises';",
      "const v8 = await import('v8');",
      "const again = require('node:vm');",
      "export { getHeapStatistics } from 'node:v8';",
    ].join('\n');
    expect(v8Reaches(parse('planted.ts', text))).toEqual(['planted.ts:1 node:v8', 'planted.ts:2 vm', 'planted.ts:4 v8', 'planted.ts:5 node:vm', 'planted.ts:6 node:v8']);
  });
});
