import { spawn, type ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { call } from '../../helpers/http.js';

/**
 * Agents as child processes sharing one Redis, for the failover and outage tests: each with its
 * own config file, health and webhook ports, JSON logs collected, and a SIGKILL that leaves no
 * chance to release anything.
 */

/** The daemon the tests spawn: `listing-agent run` of the built dist/ (`npm test` builds first). */
export const DAEMON_PATH = fileURLToPath(new URL('../../../dist/cli/main.js', import.meta.url));

/** One agent process. */
export interface Daemon {
  readonly name: string;
  readonly child: ChildProcess;
  /** `http://127.0.0.1:<health port>`. */
  readonly health: string;
  /** The JSON log lines so far, parsed. */
  lines(): Record<string, unknown>[];
  /** Resolves with the exit code, or the signal's name. */
  readonly exited: Promise<number | string | null>;
}

const running: ChildProcess[] = [];
afterEach(() => {
  for (const child of running.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

/** Writes `config` to `<dir>/<name>.json` and starts an agent on it. */
export async function startDaemon(name: string, dir: string, healthPort: number, config: Record<string, unknown>): Promise<Daemon> {
  const file = join(dir, `${name}.json`);
  await writeFile(file, JSON.stringify({ ...config, health: { listen: `127.0.0.1:${healthPort}` }, log: { level: 'info', format: 'json' } }));
  const child = spawn(process.execPath, [DAEMON_PATH, 'run', '--config', file], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '' } });
  running.push(child);
  let out = '';
  let err = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const exited = new Promise<number | string | null>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal)));
  return {
    name,
    child,
    health: `http://127.0.0.1:${healthPort}`,
    lines: () =>
      out
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .concat(err.trim() === '' ? [] : [{ msg: 'stderr', stderr: err }]),
    exited,
  };
}

/** The `/readyz` body of `daemon`, or undefined when it does not answer. */
export async function readyz(daemon: Daemon): Promise<{ status: number; body: { ready: boolean; components: Record<string, { ready: boolean; detail: string }> } } | undefined> {
  try {
    const res = await call(`${daemon.health}/readyz`);
    return { status: res.status, body: res.body };
  } catch {
    return undefined;
  }
}

/** Whether `daemon` says it leads (its `leader` component). */
export async function leads(daemon: Daemon): Promise<boolean> {
  const ready = await readyz(daemon);
  return ready?.body.components.leader?.detail.startsWith('leading') === true;
}

/** Epoch ms of the first log line of `daemon` with message `msg` at or after `since`, if any. */
export function loggedAt(daemon: Daemon, msg: string, since = 0): number | undefined {
  for (const line of daemon.lines()) {
    if (line.msg !== msg) continue;
    const at = Date.parse(String(line.time));
    if (at >= since) return at;
  }
  return undefined;
}

/** One reward hook call, counted when it arrives (before its answer: a caller may die waiting). */
export interface SlowHookCall {
  /** The last path segment: the agent that called. */
  agent: string;
  /** The `idempotency-key` header: the vote key. */
  key: string;
  /** Epoch ms the call arrived. */
  at: number;
  /** Epoch ms its answer was written (undefined while the call is held). */
  answered?: number;
}

/** A reward hook that takes `delayMs` to answer 204, so calls are in flight when an agent dies. */
export async function startSlowHook(delayMs: number): Promise<{ url: string; calls: SlowHookCall[]; close(): Promise<void> }> {
  const calls: SlowHookCall[] = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const call: SlowHookCall = { agent: (req.url ?? '').split('/').pop() ?? '', key: String(req.headers['idempotency-key'] ?? ''), at: Date.now() };
      calls.push(call);
      setTimeout(() => res.writeHead(204).end(() => (call.answered = Date.now())), delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  hooks.push(server);
  return {
    url: `http://127.0.0.1:${port}/hook`,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

const hooks: Server[] = [];
afterEach(async () => {
  await Promise.all(
    hooks.splice(0).map(
      (server) =>
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        }),
    ),
  );
});
