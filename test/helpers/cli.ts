import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach } from 'vitest';
import { runCli } from '../../src/cli/run-cli.js';

/** The built CLI entry (npm test builds before running vitest). */
export const CLI_PATH = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

/** Runs the CLI in-process; `stop` resolves the stop request (like Ctrl-C). */
export async function runCliInProcess(argv: string[], options: { cwd?: string; stopAfter?: Promise<unknown> } = {}) {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, {
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
    env: {},
    cwd: options.cwd ?? process.cwd(),
    stopRequested: (options.stopAfter ?? new Promise<never>(() => undefined)).then(() => 'SIGTERM'),
  });
  return { code, stdout, stderr };
}

const children: ChildProcessWithoutNullStreams[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

/** A CLI child process with its output collected. */
export interface CliChild {
  child: ChildProcessWithoutNullStreams;
  stdout(): string;
  stderr(): string;
  /** Resolves with the first stdout line. */
  firstLine(): Promise<string>;
  exit(): Promise<number | null>;
}

/** Spawns `node dist/cli/main.js ...args`. */
export function spawnCli(args: string[]): CliChild {
  const child = spawn(process.execPath, [CLI_PATH, ...args], { stdio: 'pipe' });
  children.push(child);
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    firstLine: () =>
      new Promise((resolve, reject) => {
        const check = () => {
          const newline = out.indexOf('\n');
          if (newline >= 0) resolve(out.slice(0, newline));
        };
        child.stdout.on('data', check);
        child.on('exit', () => reject(new Error(`exited before a line: ${err}`)));
        check();
      }),
    exit: () => exited,
  };
}
