import { describe, expect, it } from 'vitest';
import { matrixTable, RUNTIMES, type RuntimeRun } from '../../scripts/runtime-matrix.js';
import { warningLines } from './warnings.js';

/** The runtime matrix's judgement (scripts/runtime-matrix.ts), on made-up runs: no runtime is installed. */

describe('what the runtime matrix counts as a warning', () => {
  it("finds Node's warnings and deprecations, Bun's and Deno's warning lines, and nothing in ordinary output", () => {
    const printed = [
      '(node:15127) ExperimentalWarning: CommonJS module /tmp/bot.js is loading ES Module /tmp/x/index.js using require().',
      '(node:30877) TimeoutOverflowWarning: 23103871113 does not fit into a 32-bit signed integer.',
      '(node:1234) [DEP0040] DeprecationWarning: The `punycode` module is deprecated.',
      'warn: something Bun did not like',
      'Warning: Not implemented: process.someApi',
      'posted 4 servers',
      '{"level":"warn","msg":"a log line at warn is the program\'s own"}',
      '[agent]    votes: not ready (warning: none)',
    ];
    expect(warningLines(printed.join('\n'))).toEqual(printed.slice(0, 5));
  });
});

describe('the runtime matrix table', () => {
  const test = (title: string, status: 'passed' | 'failed' | 'skipped') => ({ file: 'test/runtimes/x.test.ts', title, status, durationMs: 1_500 });
  const runOf = (index: number, tests: RuntimeRun['tests'], warnings: string[] = []): RuntimeRun => ({ runtime: RUNTIMES[index]!, tests, warnings, wallMs: 20_000, output: '' });

  it('has a row per check and a column per runtime, and counts every cell, a printed warning as a failure', () => {
    const table = matrixTable([
      runOf(0, [test('demo: runs', 'passed'), test('bot: posts', 'passed')]),
      runOf(4, [test('demo: runs', 'failed'), test('bot: posts', 'passed')], ['(node:1) ExperimentalWarning: x']),
    ]);
    expect(table.lines[0]).toMatch(/^\s+Node 20\.19\.0 +Bun 1\.4\.5$/);
    expect(table.lines.find((line) => line.startsWith('demo'))).toMatch(/ok 1\.5s +FAIL 1\.5s/);
    expect(table.lines.find((line) => line.startsWith('no warning printed'))).toMatch(/ok +FAIL \(1\)/);
    expect({ passed: table.passed, failed: table.failed }).toEqual({ passed: 4, failed: 2 });
  });

  it('counts a check skipped everywhere it ran as failed: the matrix must have run it', () => {
    const table = matrixTable([runOf(3, [test('leader: leads', 'skipped')])]);
    expect(table.lines.find((line) => line.startsWith('leader'))).toMatch(/skip/);
    expect(table.failed).toBe(1);
  });
});
