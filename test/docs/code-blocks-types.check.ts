import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { codeBlocks, docPages, ROOT, type CodeBlock } from './markdown.js';

/**
 * The `ts` blocks of README.md and docs/ type-check against the built package, each a module of
 * its own (`npm run check`: one `tsc` over all of them); a block marked `ts fragment` is a piece
 * of code and is skipped. The other blocks are checked by code-blocks.test.ts in `npm test`.
 */

const where = (block: CodeBlock) => `${block.file}:${block.line}`;

describe('the ts blocks of README.md and docs/', () => {
  it('each type-checks against the package, as a module of its own', () => {
    const blocks = docPages()
      .flatMap(codeBlocks)
      .filter((b) => b.lang === 'ts' && !b.attributes.includes('fragment'));
    expect(blocks.length).toBeGreaterThan(10);
    expect(typeCheck(blocks), 'fix the example, or declare the free name in test/docs/snippets/globals.d.ts').toEqual([]);
  }, 180_000);
});

const temp = mkdtempSync(join(ROOT, '.docs-check-'));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

/**
 * Writes each block as `<temp>/b<n>.ts` (in the repository, so that `listing-agent` resolves to
 * the package itself: its `exports` and the built `dist/` types) and runs `tsc` once over them.
 * Returns tsc's errors mapped back to the page and line.
 */
function typeCheck(tsBlocks: readonly CodeBlock[]): string[] {
  tsBlocks.forEach((block, n) => writeFileSync(join(temp, `b${n}.ts`), `// ${where(block)}\n${block.text}\nexport {};\n`));
  writeFileSync(
    join(temp, 'tsconfig.json'),
    JSON.stringify({
      extends: '../tsconfig.json',
      // Examples declare what they show, and may leave it unused.
      compilerOptions: { noEmit: true, noUnusedLocals: false, noUnusedParameters: false },
      files: ['../test/docs/snippets/globals.d.ts'],
      include: ['b*.ts'],
      exclude: [],
    }),
  );
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const result = spawnSync(process.execPath, [tsc, '-p', temp, '--pretty', 'false'], { encoding: 'utf8', cwd: ROOT });
  if (result.status === 0) return [];
  const out = `${result.stdout}${result.stderr}`.trim();
  return out.split('\n').map((line) => {
    const match = /b(\d+)\.ts\((\d+),(\d+)\): (.*)$/.exec(line);
    if (!match) return line;
    const block = tsBlocks[Number(match[1])]!;
    // Line 1 of the file is the comment; line 2 is the line after the opening fence.
    return `${block.file}:${block.line + Number(match[2]) - 1}:${match[3]}: ${match[4]}`;
  });
}
