import { spawnSync } from 'node:child_process';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { checkSizes, checkSource, formatOffender, SIZE_LIMITS, wideLines } from '../../scripts/check-sizes.js';

/**
 * Units read in one sitting (scripts/check-sizes.ts): no file of src/ over 400 lines, no function
 * over 80, a factory closure counted whole, no line over 140 characters; and the check can fail,
 * as planted oversize units show.
 */

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

const temps: string[] = [];
afterAll(async () => {
  await Promise.all(temps.map((dir) => rm(dir, { recursive: true, force: true })));
});

/** A function `name` whose whole span is `lines` lines. */
const functionOf = (name: string, lines: number) => `export function ${name}(): number {\n${'  void 0;\n'.repeat(lines - 3)}  return 1;\n}\n`;

describe('the size limits of src/', () => {
  it('hold in this tree: no file over 400 lines, no function over 80, no line over 140 characters', () => {
    const offenders = checkSizes([join(REPO, 'src')], SIZE_LIMITS).map(formatOffender);
    expect(offenders).toEqual([]);
  }, 30_000);

  it('count a line in characters (code points), comments and strings alike: 140 pass, 141 do not', () => {
    const at = (width: number, fill = 'x') => `const a = '${fill.repeat(width - "const a = '';".length)}';`;
    expect(at(140)).toHaveLength(140);
    expect(wideLines('ok.ts', `${at(140)}\n${at(140, 'é')}\n// ${'y'.repeat(137)}\n`)).toEqual([]);
    const wide = [at(141), `// ${'y'.repeat(138)}`, `  * ${'z'.repeat(137)}`, `${at(140)}\t`].join('\n');
    expect(wideLines('wide.ts', wide).map((o) => `${o.line} ${o.lines}`)).toEqual(['1 141', '2 141', '3 141', '4 141']);
    expect(formatOffender(wideLines('wide.ts', wide)[0]!)).toBe('wide.ts:1 line: 141 characters (limit 140)');
  });

  it('count a function from its first line to its last, its inner functions included', () => {
    expect(checkSource('at-limit.ts', functionOf('atLimit', SIZE_LIMITS.functionLines))).toEqual([]);
    const factory = `export function createThing() {\n  function inner() {\n${'    void 0;\n'.repeat(40)}  }\n  const other = () => {\n${'    void 0;\n'.repeat(40)}  };\n  return { inner, other };\n}\n`;
    expect(checkSource('factory.ts', factory)).toEqual([{ kind: 'function', file: 'factory.ts', line: 1, name: 'createThing', lines: 87, limit: 80 }]);
  });

  it('name methods, arrows held by a variable or property, and anonymous callbacks by where they sit', () => {
    const body = '    void 0;\n'.repeat(SIZE_LIMITS.functionLines);
    const text = [
      `const held = () => {\n${body}};`,
      `const object = {\n  method() {\n${body}  },\n  property: function () {\n${body}  },\n};`,
      `export function outer() {\n  return [1].map((n) => {\n${body}    return n;\n  });\n}`,
      'void held; void object;',
    ].join('\n');
    const names = checkSource('names.ts', text).map((offender) => `${offender.line} ${offender.name}`);
    expect(names).toEqual([`1 held`, `${SIZE_LIMITS.functionLines + 4} method`, `${2 * SIZE_LIMITS.functionLines + 6} property`, `${3 * SIZE_LIMITS.functionLines + 9} outer`, `${3 * SIZE_LIMITS.functionLines + 10} <anonymous in outer>`]);
  });

  it('are enforced: a planted oversize file and function are reported, and the command exits 1', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'la-sizes-'));
    temps.push(dir);
    await mkdir(join(dir, 'src', 'deep'), { recursive: true });
    await writeFile(join(dir, 'src', 'small.ts'), functionOf('fine', 20));
    await writeFile(join(dir, 'src', 'deep', 'long-file.ts'), `${'export const a = 1;\n'.repeat(SIZE_LIMITS.fileLines)}export const b = 2;\n`);
    await writeFile(join(dir, 'src', 'deep', 'long-function.ts'), `// why\n${functionOf('tooLong', SIZE_LIMITS.functionLines + 1)}`);
    await writeFile(join(dir, 'src', 'deep', 'wide.ts'), `export const fine = 1;\nexport const wide = '${'w'.repeat(SIZE_LIMITS.lineWidth)}';\n`);
    await writeFile(join(dir, 'src', 'deep', 'types.d.ts'), '// declaration files are not read\n'.repeat(SIZE_LIMITS.fileLines + 1));

    const found = checkSizes([join(dir, 'src')]).map((offender) => ({ ...offender, file: offender.file.slice(offender.file.indexOf('src')) }));
    expect(found).toEqual([
      { kind: 'file', file: 'src/deep/long-file.ts', line: 1, name: '(file)', lines: 401, limit: 400 },
      { kind: 'function', file: 'src/deep/long-function.ts', line: 2, name: 'tooLong', lines: 81, limit: 80 },
      { kind: 'line', file: 'src/deep/wide.ts', line: 2, name: '(line)', lines: 163, limit: 140 },
    ]);

    const run = spawnSync(process.execPath, ['--import', join(REPO, 'test/helpers/ts-register.mjs'), join(REPO, 'scripts/check-sizes.ts'), 'src'], { cwd: dir, encoding: 'utf8' });
    expect(run.status).toBe(1);
    expect(run.stdout).toContain('src/deep/long-file.ts:1 file: 401 lines (limit 400)');
    expect(run.stdout).toContain('src/deep/long-function.ts:2 tooLong: 81 lines (limit 80)');
    expect(run.stdout).toContain('src/deep/wide.ts:2 line: 163 characters (limit 140)');
    expect(run.stdout).not.toContain('small.ts');

    await rm(join(dir, 'src', 'deep'), { recursive: true });
    const clean = spawnSync(process.execPath, ['--import', join(REPO, 'test/helpers/ts-register.mjs'), join(REPO, 'scripts/check-sizes.ts'), 'src'], { cwd: dir, encoding: 'utf8' });
    expect(clean.status).toBe(0);
  }, 30_000);
});
