/**
 * The sidecar daemon as users run it: `node dist/cli/main.js run` in a child process of its own,
 * configured only by LISTING_AGENT_* variables (as in the container), JSON logs on stdout, every
 * port 127.0.0.1:0, state in a temporary directory. The same shape as test/helpers/cli.ts.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const CLI_PATH = join(ROOT, 'dist', 'cli', 'main.js');
export const AUTOPOSTER_PATH = join(ROOT, 'bench', 'helpers', 'autoposter.mjs');

/**
 * What the two packaged ways (Dockerfile `ENV` and `ENTRYPOINT`, deploy/listing-agent.service
 * `Environment=` and `ExecStart=`) give the daemon for its idle memory (docs/decisions/measurements-before-issue-33.md, "Footprint").
 */
export const PACKAGED = { nodeArgs: ['--max-semi-space-size=2'], env: { MALLOC_MMAP_THRESHOLD_: '131072' } } as const;

export const PUSH_KEY = 'bench-push-key-0123456789abcdef';
export const WEBHOOK_SECRET = 'whs_bench0123456789abcdefghijklmnopqrstuv';

/** Refuses to run against a missing dist/ or one older than src/cli/main.ts (run `npm run build`). */
export function assertBuilt(): void {
  if (!existsSync(CLI_PATH)) throw new Error('dist/cli/main.js is missing: run `npm run build` first');
  if (statSync(CLI_PATH).mtimeMs < statSync(join(ROOT, 'src', 'cli', 'main.ts')).mtimeMs) {
    throw new Error('dist/ is older than src/: run `npm run build` first');
  }
}

export interface DaemonOptions {
  v1: string;
  v0: string;
  token: string;
  /** `redis`: the sum of the shard reports in Redis (give `LISTING_AGENT_STATE_REDIS_URL` in `env`). */
  stats?: { source: 'push' } | { source: 'discord-rest'; apiBaseUrl: string; discordToken: string } | { source: 'redis' };
  votes?: boolean;
  webhooks?: boolean;
  health?: boolean;
  /** Extra LISTING_AGENT_* variables. */
  env?: Record<string, string>;
  /** Extra node flags (`--cpu-prof`). */
  nodeArgs?: string[];
  /** Another build's `dist/cli/main.js` (a side-by-side comparison); default this checkout's. */
  cliPath?: string;
}

export interface LogLine {
  msg: string;
  time: string;
  [field: string]: unknown;
}

export interface Daemon {
  child: ChildProcessWithoutNullStreams;
  /** performance.now() and Date.now() just before spawn(). */
  spawnedAt: number;
  spawnedAtEpoch: number;
  lines: LogLine[];
  /** Resolves with the first log line whose msg is `msg` (rejects on exit or after `timeoutMs`). */
  waitFor(msg: string, timeoutMs?: number): Promise<LogLine>;
  stop(): Promise<number | null>;
}

/** The daemon's environment for `options`, its state in `dir`: LISTING_AGENT_* variables only, as in the container. */
function daemonEnv(options: DaemonOptions, dir: string): Record<string, string> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    NODE_ENV: 'production',
    LISTING_AGENT_SERVICE_V1: options.v1,
    LISTING_AGENT_SERVICE_V0: options.v0,
    LISTING_AGENT_SERVICE_TOKEN: options.token,
    LISTING_AGENT_STATE_DIRECTORY: join(dir, 'state'),
    LISTING_AGENT_LOG_FORMAT: 'json',
    LISTING_AGENT_HEALTH_ENABLED: String(options.health ?? true),
    LISTING_AGENT_HEALTH_LISTEN: '127.0.0.1:0',
  };
  if (options.stats) {
    env.LISTING_AGENT_STATS_ENABLED = 'true';
    env.LISTING_AGENT_STATS_SOURCE = options.stats.source;
    if (options.stats.source === 'push') {
      env.LISTING_AGENT_STATS_PUSH_KEY = PUSH_KEY;
      env.LISTING_AGENT_STATS_PUSH_LISTEN = '127.0.0.1:0';
    } else if (options.stats.source === 'discord-rest') {
      env.LISTING_AGENT_DISCORD_API_BASE_URL = options.stats.apiBaseUrl;
      env.LISTING_AGENT_DISCORD_TOKEN = options.stats.discordToken;
    }
  }
  if (options.votes) env.LISTING_AGENT_VOTES_ENABLED = 'true';
  if (options.webhooks) {
    env.LISTING_AGENT_WEBHOOKS_ENABLED = 'true';
    env.LISTING_AGENT_WEBHOOKS_LISTEN = '127.0.0.1:0';
    env.LISTING_AGENT_WEBHOOKS_SECRETS = WEBHOOK_SECRET;
  }
  return { ...env, ...options.env };
}

/** Spawns the daemon with `options`; its state directory goes away on `stop()`. */
export function spawnDaemon(options: DaemonOptions): Daemon {
  const dir = mkdtempSync(join(tmpdir(), 'listing-agent-bench-'));
  const env = daemonEnv(options, dir);
  const spawnedAtEpoch = Date.now();
  const spawnedAt = performance.now();
  const args = [...(options.nodeArgs ?? []), options.cliPath ?? CLI_PATH, 'run'];
  const child = spawn(process.execPath, args, { cwd: dir, env, stdio: 'pipe' });
  const lines: LogLine[] = [];
  const waiters: Array<{ msg: string; resolve: (line: LogLine) => void }> = [];
  let pending = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdout.on('data', (chunk: Buffer) => {
    pending += chunk.toString();
    let newline;
    while ((newline = pending.indexOf('\n')) >= 0) {
      const text = pending.slice(0, newline);
      pending = pending.slice(newline + 1);
      let line: LogLine;
      try {
        line = JSON.parse(text) as LogLine;
      } catch {
        continue;
      }
      lines.push(line);
      for (const waiter of waiters.filter((w) => w.msg === line.msg)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(line);
      }
    }
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    spawnedAt,
    spawnedAtEpoch,
    lines,
    waitFor(msg, timeoutMs = 15_000) {
      const seen = lines.find((line) => line.msg === msg);
      if (seen) return Promise.resolve(seen);
      return new Promise<LogLine>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`daemon: no '${msg}' within ${timeoutMs} ms; stderr: ${stderr}`)), timeoutMs);
        void exited.then((code) => reject(new Error(`daemon exited (${code}) before '${msg}'; stderr: ${stderr}`)));
        waiters.push({
          msg,
          resolve: (line) => {
            clearTimeout(timer);
            resolve(line);
          },
        });
      });
    },
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      const code = await exited;
      rmSync(dir, { recursive: true, force: true });
      return code;
    },
  };
}

/** The autoposter child (bench/helpers/autoposter.mjs) against `origin`. */
export function spawnAutoposter(options: {
  origin: string;
  token: string;
  serverCount: number;
  shardCount: number;
  intervalMs?: number;
  nodeArgs?: string[];
}) {
  const spawnedAtEpoch = Date.now();
  const spawnedAt = performance.now();
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), AUTOPOSTER_PATH], {
    cwd: ROOT,
    stdio: 'pipe',
    env: {
      PATH: process.env.PATH ?? '',
      NODE_ENV: 'production',
      BENCH_EMULATOR_ORIGIN: options.origin,
      BENCH_TOKEN: options.token,
      BENCH_SERVER_COUNT: String(options.serverCount),
      BENCH_SHARD_COUNT: String(options.shardCount),
      BENCH_INTERVAL_MS: String(options.intervalMs ?? 1_800_000),
    },
  });
  const events: Array<{ event: string; at?: number; message?: string }> = [];
  let pending = '';
  child.stdout.on('data', (chunk: Buffer) => {
    pending += chunk.toString();
    let newline;
    while ((newline = pending.indexOf('\n')) >= 0) {
      events.push(JSON.parse(pending.slice(0, newline)) as { event: string });
      pending = pending.slice(newline + 1);
    }
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    spawnedAt,
    spawnedAtEpoch,
    events,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

/** POSTs `shards` (servers per shard) to the daemon's push endpoint; resolves with the status and when it was answered. */
export async function pushCounts(url: string, shards: number[]): Promise<{ status: number; atEpoch: number }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${PUSH_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ shards }),
  });
  await res.arrayBuffer();
  return { status: res.status, atEpoch: Date.now() };
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` every `everyMs` until it returns a value (or throws after `timeoutMs`). */
export async function until<T>(check: () => T | undefined, timeoutMs: number, what: string, everyMs = 2): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** A Markdown table. */
export function table(header: string[], rows: string[][], align?: Array<'l' | 'r'>): string {
  const sep = header.map((_, i) => ((align?.[i] ?? 'l') === 'r' ? '---:' : '---'));
  return [header, sep, ...rows].map((row) => `| ${row.join(' | ')} |`).join('\n');
}

/** The machine, for the header of every table. */
export async function machine(): Promise<string> {
  const os = await import('node:os');
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  const [one] = os.loadavg();
  const memory = `${(os.totalmem() / 2 ** 30).toFixed(0)} GiB`;
  const system = `${os.type()} ${os.release()}, Node ${process.version}`;
  return `${cpu}, ${os.availableParallelism()} cores, ${memory}, ${system}; 1-min load average at start ${one!.toFixed(2)}`;
}
