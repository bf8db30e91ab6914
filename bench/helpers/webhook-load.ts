/**
 * Deliveries and load for bench/webhooks.bench.ts and bench/latency.bench.ts: a pool of distinct,
 * pre-signed 1 KiB bodies (v1 `vote.create` with `x-topgg-signature`, or legacy v0 `upvote` with
 * `Authorization`), an autocannon run that cycles through the pool, one distinct vote per request
 * over all connections, and the server processes (bench/helpers/webhook-target.mjs).
 */
import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { signDelivery } from '../../src/public/webhooks.js';

/** The webhook secrets and path every bench's target (webhook-target.mjs) is started with. */
export const TARGET_V1_SECRET = 'whs_bench_0123456789abcdefghijklmnopqrstuv';
export const TARGET_V0_SECRET = 'bench-legacy-webhook-authorization-secret';
export const TARGET_PATH = '/webhooks/topgg';

/** The environment of a webhook-target.mjs process against the bench service; `dist`: another build's dist/. */
export function targetEnv(service: { v1: string; v0: string; token: string }, dist?: string): Record<string, string> {
  return {
    BENCH_V1_SECRET: TARGET_V1_SECRET,
    BENCH_V0_SECRET: TARGET_V0_SECRET,
    BENCH_PATH: TARGET_PATH,
    BENCH_SERVICE_V1: service.v1,
    BENCH_SERVICE_V0: service.v0,
    BENCH_TOKEN: service.token,
    ...(dist === undefined ? {} : { BENCH_DIST: dist }),
  };
}

/** Every body is padded to exactly this many bytes. */
export const BODY_BYTES = 1024;
const HOUR_MS = 3_600_000;

export interface Delivery {
  body: Buffer;
  headers: Record<string, string>;
}

/** Pads a JSON object (with an empty `padding` field) to exactly {@link BODY_BYTES} bytes. */
function padded(value: Record<string, unknown>): Buffer {
  const bare = Buffer.byteLength(JSON.stringify({ ...value, padding: '' }));
  if (bare > BODY_BYTES) throw new Error(`a body of ${bare} bytes does not fit in ${BODY_BYTES}`);
  const body = Buffer.from(JSON.stringify({ ...value, padding: 'x'.repeat(BODY_BYTES - bare) }));
  if (body.length !== BODY_BYTES) throw new Error(`padded body is ${body.length} bytes`);
  return body;
}

/** A Snowflake-shaped ID (18 digits) made from `n`. */
const snowflake = (base: bigint, n: number) => String(base + BigInt(n));

/**
 * `count` signed v1 `vote.create` deliveries, each a different user's vote (so a different vote
 * key), signed at `nowMs`. The shape is decisions.md's; `padding` (an extra field, which the
 * receiver drops) brings each body to 1 KiB.
 */
export function voteCreateDeliveries(options: {
  count: number;
  secret: string;
  projectId: string;
  botId: string;
  nowMs: number;
}): Delivery[] {
  const { count, secret, projectId, botId, nowMs } = options;
  const timestampSeconds = Math.floor(nowMs / 1000);
  const deliveries: Delivery[] = [];
  for (let n = 0; n < count; n++) {
    const created = nowMs - 60_000 + (n % 60_000);
    const platformId = snowflake(300_000_000_000_000_000n, n);
    const body = padded({
      type: 'vote.create',
      data: {
        id: snowflake(900_000_000_000_000_000n, n),
        weight: 1,
        created_at: new Date(created).toISOString(),
        expires_at: new Date(created + 12 * HOUR_MS).toISOString(),
        project: { id: projectId, type: 'bot', platform: 'discord', platform_id: botId },
        user: {
          id: snowflake(500_000_000_000_000_000n, n),
          platform_id: platformId,
          name: `voter_${n}`,
          avatar_url: `https://cdn.example.test/avatars/${platformId}/a_0123456789abcdef0123456789abcdef.png`,
        },
      },
    });
    const headers = signDelivery({ secret, rawBody: body, timestampSeconds, traceId: `trace-${n.toString(16).padStart(8, '0')}` });
    deliveries.push({ body, headers: { 'content-type': 'application/json', ...headers } });
  }
  return deliveries;
}

/** `count` legacy v0 `upvote` deliveries (`Authorization: <secret>`), each a different user, padded to 1 KiB. */
export function legacyUpvoteDeliveries(options: { count: number; secret: string; botId: string }): Delivery[] {
  const { count, secret, botId } = options;
  const deliveries: Delivery[] = [];
  for (let n = 0; n < count; n++) {
    const body = padded({ bot: botId, user: snowflake(300_000_000_000_000_000n, n), type: 'upvote', isWeekend: false });
    deliveries.push({ body, headers: { 'content-type': 'application/json', authorization: secret } });
  }
  return deliveries;
}

/** One request by hand (node's fetch, a fresh connection): the status code. */
export async function sendOnce(url: string, delivery: Delivery): Promise<number> {
  const response = await fetch(url, { method: 'POST', headers: delivery.headers, body: delivery.body });
  await response.arrayBuffer();
  return response.status;
}

export interface LoadResult {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  total: number;
  ok2xx: number;
  non2xx: number;
  /** Connection errors, timeouts included. */
  errors: number;
  /** The load generator's own CPU use over the run, in percent of one core. */
  generatorCpuPercent: number;
}

/**
 * Runs autocannon against `url` for `seconds` with `connections` keep-alive connections, each
 * request the next delivery of the pool (shared over connections, so every request is a distinct
 * vote until the pool wraps). `cursor` carries the position from one run to the next.
 */
export async function loadRun(options: {
  url: string;
  pool: readonly Delivery[];
  cursor: { next: number };
  connections: number;
  seconds: number;
}): Promise<LoadResult> {
  const { url, pool, cursor, connections, seconds } = options;
  // autocannon's own histogram keeps whole milliseconds; the response event has the exact time.
  const latencies: number[] = [];
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url,
        connections,
        duration: seconds,
        pipelining: 1,
        timeout: 10,
        method: 'POST',
        requests: [
          {
            setupRequest: (request) => {
              const delivery = pool[cursor.next++ % pool.length] as Delivery;
              return { ...request, method: 'POST', headers: delivery.headers, body: delivery.body };
            },
          },
        ],
      },
      (error: Error | null, done: autocannon.Result) => (error ? reject(error) : resolve(done)),
    );
    instance.on('response', (_client, _status, _bytes, responseTime) => latencies.push(responseTime));
  });
  const cpu = process.cpuUsage(cpuBefore);
  const wallMs = performance.now() - started;
  latencies.sort((x, y) => x - y);
  const percentile = (p: number) => latencies[Math.min(latencies.length - 1, Math.ceil((p / 100) * latencies.length) - 1)] ?? Number.NaN;
  return {
    requestsPerSecond: result.requests.total / result.duration,
    p50Ms: percentile(50),
    p99Ms: percentile(99),
    total: result.requests.total,
    ok2xx: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
    generatorCpuPercent: ((cpu.user + cpu.system) / 1000 / wallMs) * 100,
  };
}

/** What a target process saw over the measured run. */
export interface TargetStats {
  handled: number;
  accepted: number;
  duplicates: number;
  /** Calls of the in-process hook (the targets with a real pipeline). */
  hooked: number;
  /** Log lines written by our receiver's targets (the daemon's logger at its default level, `info`). */
  logLines?: number;
  /** User + system CPU of the whole process (every thread). */
  cpuMs: number;
  /** CPU of the event loop's thread alone (Linux; NaN elsewhere). */
  mainThreadCpuMs: number;
  /** Ledger commits (the file ledger's write + fsync), 0 without one. */
  commits: number;
  wallMs: number;
  /** The event loop's delay over the measured phase (`monitorEventLoopDelay`, 1 ms resolution), ms. */
  loopDelayP99Ms: number;
  loopDelayMaxMs: number;
  /** GC pauses over the measured phase (`PerformanceObserver` 'gc' entries). */
  gc: { count: number; totalMs: number; maxMs: number };
  rssBytes: number;
}

export interface TargetProcess {
  url: string;
  /** Zeroes the target's CPU clock and counters (the measured phase begins). */
  reset(): Promise<void>;
  /** Stops the target and returns what it saw. */
  stop(): Promise<TargetStats>;
  /** Sends `message` and resolves with the value of `key` in the target's answer. */
  ask(message: Record<string, unknown>, key: string, timeoutMs: number): Promise<unknown>;
  /** Kills it (cleanup after a failure). */
  kill(): void;
}

const TARGET_SCRIPT = fileURLToPath(new URL('./webhook-target.mjs', import.meta.url));

/**
 * CPU pinning (Linux, with `taskset` and at least 2 cores): the load generator on core 0, the
 * server's event-loop thread on core 1. Loopback HTTP is a ping-pong between two processes, and
 * the scheduler likes to wake the answering process on the core of the one that woke it: unpinned,
 * the two sometimes share one core for a whole run and the result halves. The server's other
 * threads (libuv's pool, which runs the ledger's fsync; V8's helpers) stay free to run on either
 * core, as they would on a real machine. `undefined` when pinning is not possible.
 */
export const pinning: { generatorCpu: number; serverCpu: number } | undefined = (() => {
  if (process.platform !== 'linux' || availableParallelism() < 2 || process.env.BENCH_NO_PIN === '1') return undefined;
  try {
    execFileSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' });
    return { generatorCpu: 0, serverCpu: 1 };
  } catch {
    return undefined;
  }
})();

/**
 * Pins every thread of this process (the load generator) to its core; returns a function that
 * restores the affinity it had. A no-op without {@link pinning}.
 */
export function pinGenerator(): () => void {
  if (!pinning) return () => {};
  const before = /: *([0-9a-f]+)\s*$/i.exec(execFileSync('taskset', ['-p', String(process.pid)], { encoding: 'utf8' }))?.[1];
  execFileSync('taskset', ['-a', '-p', '-c', String(pinning.generatorCpu), String(process.pid)], { stdio: 'ignore' });
  return () => {
    if (before) execFileSync('taskset', ['-a', '-p', before, String(process.pid)], { stdio: 'ignore' });
  };
}

/** Starts `bench/helpers/webhook-target.mjs <target>` in a child process and waits until it listens. */
export async function startTarget(target: string, env: Record<string, string>): Promise<TargetProcess> {
  const child: ChildProcess = fork(TARGET_SCRIPT, [target], {
    env: { ...process.env, NODE_ENV: 'production', ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    // The bench's own loaders (vitest) must not reach the target.
    // `BENCH_TARGET_NODE_ARGS`: node flags for the servers (the daemon's, to compare their cost).
    execArgv: process.env.BENCH_TARGET_NODE_ARGS?.split(' ').filter((arg) => arg !== '') ?? [],
  });
  /** The next message of the child that has `key`, within `timeoutMs`. */
  const next = (key: string, timeoutMs: number): Promise<Record<string, unknown>> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => done(new Error(`${target}: no "${key}" from the target within ${timeoutMs} ms`)), timeoutMs);
      const onMessage = (message: Record<string, unknown>) => {
        if (key in message) done(undefined, message);
      };
      const onExit = (code: number | null) => done(new Error(`${target}: the target exited (${code}) before "${key}"`));
      function done(error?: Error, message?: Record<string, unknown>) {
        clearTimeout(timer);
        child.off('message', onMessage);
        child.off('exit', onExit);
        if (error) reject(error);
        else resolve(message as Record<string, unknown>);
      }
      child.on('message', onMessage);
      child.once('exit', onExit);
    });
  const kill = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  try {
    const ready = await next('ready', 15_000);
    // The main thread only (its thread ID is the process ID): see `pinning`.
    if (pinning && child.pid !== undefined) {
      execFileSync('taskset', ['-p', '-c', String(pinning.serverCpu), String(child.pid)], { stdio: 'ignore' });
    }
    return {
      url: String(ready.url),
      reset: async () => {
        const done = next('reset', 5_000);
        child.send({ reset: true });
        await done;
      },
      stop: async () => {
        const done = next('stats', 10_000);
        child.send({ stop: true });
        try {
          return (await done).stats as TargetStats;
        } finally {
          kill();
        }
      },
      ask: async (message, key, timeoutMs) => {
        const done = next(key, timeoutMs);
        child.send(message);
        return (await done)[key];
      },
      kill,
    };
  } catch (error) {
    kill();
    throw error;
  }
}

/** The 1, 5 and 15 minute load averages, as text. */
export const loadAverage = (): string =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(', ');

/** The machine and its load before and after the run, for a bench's notes. */
export function machineNote(loadBefore: string, loadAfter: string): string {
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  const machine = `${availableParallelism()} cores (nproc), ${cpu}, Node ${process.version}, ${process.platform}`;
  const day = new Date().toISOString().slice(0, 10);
  return `Machine: ${machine}; ${day}; load average (1, 5, 15 min) before the run ${loadBefore}, after it ${loadAfter}.`;
}
