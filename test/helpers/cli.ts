import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterEach } from 'vitest';
import { runCli } from '../../src/cli/run-cli.js';

/** The built CLI entry (npm test builds before running vitest). */
export const CLI_PATH = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

/** Runs the CLI in-process; `stop` resolves the stop request (like Ctrl-C). */
export async function runCliInProcess(
  argv: string[],
  options: { cwd?: string; stopAfter?: Promise<unknown>; env?: Record<string, string | undefined> } = {},
) {
  let stdout = '';
  let stderr = '';
  let logs = '';
  const code = await runCli(argv, {
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
    env: options.env ?? {},
    cwd: options.cwd ?? process.cwd(),
    stopRequested: (options.stopAfter ?? new Promise<never>(() => undefined)).then(() => 'SIGTERM'),
    logStream: new Writable({
      write(chunk, _encoding, done) {
        logs += chunk.toString();
        done();
      },
    }),
    isTTY: false,
    owner: { pid: process.pid, host: 'test-host' },
    isProcessAlive: () => true,
  });
  return { code, stdout, stderr, logs };
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
  /** Resolves with the first stdout line that contains `text` (rejects if the process exits first). */
  lineContaining(text: string, timeoutMs?: number): Promise<string>;
  exit(): Promise<number | null>;
}

/** Spawns `node dist/cli/main.js ...args`. */
export function spawnCli(args: string[], options: { env?: Record<string, string>; cwd?: string } = {}): CliChild {
  const child = spawn(process.execPath, [CLI_PATH, ...args], {
    stdio: 'pipe',
    ...(options.cwd ? { cwd: options.cwd } : {}),
    // A clean environment: nothing of the developer's LISTING_AGENT_* leaks into a test.
    ...(options.env ? { env: { PATH: process.env.PATH ?? '', ...options.env } } : {}),
  });
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
    lineContaining: (text, timeoutMs = 10_000) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no line with '${text}' within ${timeoutMs} ms; stdout: ${out}; stderr: ${err}`)), timeoutMs);
        const check = () => {
          const line = out.split('\n').find((l) => l.includes(text));
          if (line !== undefined) {
            clearTimeout(timer);
            resolve(line);
          }
        };
        child.stdout.on('data', check);
        child.on('exit', () => {
          clearTimeout(timer);
          reject(new Error(`exited before a line with '${text}'; stdout: ${out}; stderr: ${err}`));
        });
        check();
      }),
    exit: () => exited,
  };
}
