import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach } from 'vitest';

/** `--import` this to run TypeScript sources in a child (ts-hooks.mjs). */
const REGISTER = fileURLToPath(new URL('./ts-register.mjs', import.meta.url));

/** A child process running one of the helper scripts, with its stdout as lines. */
export interface TsChild {
  readonly child: ChildProcess;
  readonly lines: string[];
  /** Resolves with the first line (already printed or to come) that matches, or rejects after `timeoutMs`. */
  waitForLine(match: RegExp, timeoutMs?: number): Promise<string>;
  /** SIGKILL, and wait for the exit. */
  kill(): Promise<void>;
}

const children: TsChild[] = [];
afterEach(async () => {
  await Promise.all(children.splice(0).map((child) => child.kill()));
});

/** Starts `node --import ts-register.mjs test/helpers/<script> ...args`; killed after the test. */
export function startTsChild(script: string, args: readonly string[]): TsChild {
  const path = fileURLToPath(new URL(`./${script}`, import.meta.url));
  const child = spawn(process.execPath, ['--import', REGISTER, path, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  let stderr = '';
  let partial = '';
  const listeners = new Set<() => void>();
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    const parts = (partial + chunk).split('\n');
    partial = parts.pop() ?? '';
    lines.push(...parts);
    for (const listener of listeners) listener();
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  const handle: TsChild = {
    child,
    lines,
    waitForLine(match, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = lines.find((line) => match.test(line));
          if (found !== undefined) finish(() => resolve(found));
          else if (child.exitCode !== null || child.signalCode !== null) finish(() => reject(new Error(`${script} exited before printing ${match}: ${stderr.slice(-1_000)}`)));
        };
        const timer = setTimeout(() => finish(() => reject(new Error(`${script} did not print ${match} within ${timeoutMs} ms: ${stderr.slice(-1_000)}`))), timeoutMs);
        const finish = (settle: () => void) => {
          clearTimeout(timer);
          listeners.delete(check);
          child.off('exit', check);
          settle();
        };
        listeners.add(check);
        child.on('exit', check);
        check();
      });
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
  children.push(handle);
  return handle;
}
