/**
 * One server under load for bench/webhooks.bench.ts and bench/latency.bench.ts, in a process of
 * its own (so it does not share an event loop with the load generator). Started with `fork()`:
 *
 *   node bench/helpers/webhook-target.mjs <target>
 *
 * targets:
 * - `receiver`: the durable receiver as a bot owner runs it: `createListingAgent` from the
 *   package's root (the built dist/) with `webhooks.enabled`, the default file vote ledger in a
 *   temp directory (every vote durably pending, written and fsynced by group commit, before its
 *   2xx), one `agent.on('vote')` listener (the in-process hook), stats, votes polling and health
 *   off, logging as the daemon does by default (pino at `info`, JSON lines, see `daemonLogger`);
 *   the service is the emulator the bench runs (BENCH_SERVICE_V1, BENCH_SERVICE_V0, BENCH_TOKEN);
 * - `minimal`: the minimal durable server (bench/helpers/minimal-durable-server.mjs);
 * - `topgg-sdk`: @top-gg/sdk's `Webhook.listener` on Express (legacy v0 scheme), which records nothing.
 *
 * Environment: BENCH_V1_SECRET (the `whs_...` secret of v1 deliveries), BENCH_V0_SECRET (the
 * legacy `Authorization` secret), BENCH_PATH (the webhook path); BENCH_DIST: another build's
 * dist/ for `receiver` (default this repository's); BENCH_CPU_PROFILE_DIR (optional): a CPU
 * profile of the measured phase, from the reset to the stop, is written there as
 * `<target>-<pid>.cpuprofile` with `<target>-<pid>.json` (its stats); BENCH_HEAP_PROFILE_DIR
 * (optional): likewise a sampling heap profile, `<target>-<pid>.heapprofile`; BENCH_THREAD_CPU=1:
 * the stats carry each thread's CPU. BENCH_STATE_PARENT: where the state directory (the receiver's
 * ledger, the minimal server's journal) is made, default the OS temp directory (bench/latency.bench.ts
 * puts it on /dev/shm for its tmpfs diagnosis). The stats carry the event loop's delay (p99, max,
 * from `monitorEventLoopDelay`) and the GC pauses (count, total, longest) of the measured phase.
 *
 * BENCH_RECORD_HOOK_TIMES=1: the `receiver`'s vote listener records the monotonic clock at each
 * call; on `{ drain: <ms>, expect: <n> }` the child waits until its listener has been called `n`
 * times since the reset (at most `<ms>`) and answers `{ drained: { hookTimes, hooked } }`
 * (bench/latency.bench.ts).
 *
 * Protocol (IPC): the child sends `{ ready: true, url }` (the webhook URL, path included) once it
 * listens; `{ reset: true }` starts the measured phase (CPU and counters from there); on
 * `{ stop: true }` it sends `{ stats }` (its CPU time and what its handler saw) and exits. It
 * exits by itself when the parent goes away (IPC disconnect) and after a hard limit of 180 s.
 */
import { mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Writable } from 'node:stream';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { startMinimalDurableServer } from './minimal-durable-server.mjs';
import { startCpuProfile, startHeapSampling, stopCpuProfile, stopHeapSampling } from './profile.mjs';

const target = process.argv[2];
const env = process.env;
const V1_SECRET = env.BENCH_V1_SECRET ?? '';
const V0_SECRET = env.BENCH_V0_SECRET ?? '';
const PATH = env.BENCH_PATH ?? '/webhook';
const HARD_LIMIT_MS = 180_000;
const DIST = env.BENCH_DIST ? pathToFileURL(`${resolve(env.BENCH_DIST)}/`) : new URL('../../dist/', import.meta.url);
const PROFILE_DIR = env.BENCH_CPU_PROFILE_DIR;
const HEAP_PROFILE_DIR = env.BENCH_HEAP_PROFILE_DIR;
const RECORD_HOOK_TIMES = env.BENCH_RECORD_HOOK_TIMES === '1';

if (!process.send) throw new Error('webhook-target.mjs is started by bench/webhooks.bench.ts or bench/latency.bench.ts (fork, with IPC)');
if (!V1_SECRET || !V0_SECRET) throw new Error('BENCH_V1_SECRET and BENCH_V0_SECRET are required');

/** What the handler saw since the reset (a target that answers 2xx without doing the work is not measured). */
const seen = { handled: 0, accepted: 0, duplicates: 0, hooked: 0, logLines: 0 };
/** Journal commits so far (write + fdatasync each), where the target can tell. */
let commitsNow = () => 0;
/** Pairs of user ID, `process.hrtime.bigint()` as text, one per hook call: flat, so the IPC message stays small. */
let hookTimes = [];
/** Set by each target: stops its server and whatever it owns. */
let close = async () => {};

/** The temp directories of this process: removed after the stop, and at exit whatever ends it. */
const scratches = [];
const removeScratches = () => {
  for (const directory of scratches.splice(0)) rmSync(directory, { recursive: true, force: true });
};
process.on('exit', removeScratches);

function scratch(prefix) {
  const directory = mkdtempSync(join(env.BENCH_STATE_PARENT ?? tmpdir(), prefix));
  scratches.push(directory);
  return directory;
}

// ---------------------------------------------------------------------------------------------
// The durable receiver: the agent with webhooks on, the default (file) ledger, one vote listener.
async function receiverServer() {
  const { createListingAgent } = await import(new URL('index.js', DIST).href);
  const agent = createListingAgent({
    token: env.BENCH_TOKEN,
    logger: await daemonLogger(),
    config: {
      service: { v1: env.BENCH_SERVICE_V1, v0: env.BENCH_SERVICE_V0 },
      stats: { enabled: false },
      votes: { enabled: false },
      health: { enabled: false },
      webhooks: { enabled: true, listen: '127.0.0.1:0', path: PATH, secrets: [V1_SECRET] },
      state: { directory: scratch('listing-agent-webhooks-bench-') },
    },
  });
  // The agent answers a delivery once its vote is durably pending, and calls the listener after:
  // every call is a vote received and recorded (a duplicate gets no call).
  agent.on('vote', async (vote) => {
    seen.handled += 1;
    seen.accepted += 1;
    seen.hooked += 1;
    // The monotonic clock is one for every process of the machine: the sender compares.
    if (RECORD_HOOK_TIMES) hookTimes.push(vote.userId, String(process.hrtime.bigint()));
  });
  agent.on('error', (error) => process.stderr.write(`receiver: ${error.message}\n`));
  await agent.start();
  const url = agent.webhookReceiverUrl;
  if (url === undefined) throw new Error('the agent started without its webhook receiver');
  close = () => agent.stop({ deadlineMs: 2_000 });
  return url.endsWith(PATH) ? url : `${url.replace(/\/$/, '')}${PATH}`;
}

/**
 * The daemon's logger as `listing-agent run` makes it, at the default level (`info`) in JSON
 * lines: whatever the receiver and the pipeline log at that level is part of what is measured.
 * The lines go to /dev/null with one synchronous write each, counted for the report.
 */
async function daemonLogger() {
  const { createLogger } = await import(new URL('public/runtime.js', DIST).href);
  const fd = openSync('/dev/null', 'w');
  const destination = new Writable({
    write(chunk, _encoding, done) {
      writeSync(fd, chunk);
      seen.logLines += 1;
      done();
    },
  });
  return createLogger({ level: 'info', format: 'json', destination, secrets: [V1_SECRET, V0_SECRET, env.BENCH_TOKEN ?? ''] });
}

// ---------------------------------------------------------------------------------------------
// The minimal durable server: what the receiver is held against.
async function minimalServer() {
  const file = join(scratch('listing-agent-minimal-bench-'), 'votes.jsonl');
  const server = await startMinimalDurableServer({ secret: V1_SECRET, path: PATH, file });
  commitsNow = server.commits;
  close = () => server.close();
  // Its own counters, copied at the reset and at the stop.
  counters = () => server.seen;
  return server.url;
}

// ---------------------------------------------------------------------------------------------
// What users would otherwise pick: @top-gg/sdk's Webhook.listener on Express (legacy scheme).
async function topggSdkServer() {
  const { default: express } = await import('express');
  const { Webhook } = await import('@top-gg/sdk');
  const app = express();
  const webhook = new Webhook(V0_SECRET);
  app.post(
    PATH,
    webhook.listener(async (vote) => {
      if (vote.type === 'upvote') seen.handled += 1;
    }),
  );
  const server = createServer(app);
  await new Promise((done, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', done);
  });
  close = () =>
    new Promise((done) => {
      server.close(() => done());
      server.closeAllConnections();
    });
  return `http://127.0.0.1:${server.address().port}${PATH}`;
}

/** The minimal server keeps its own counts; the others count into `seen`. */
let counters = () => seen;
let countersAtReset = { handled: 0, accepted: 0, duplicates: 0 };

const starters = { receiver: receiverServer, minimal: minimalServer, 'topgg-sdk': topggSdkServer };
const start = starters[target];
if (!start) throw new Error(`unknown target ${target}: one of ${Object.keys(starters).join(', ')}`);

/** Stops the server (its temp directory goes at exit), then exits; at most 3 s. */
function shutdown(code) {
  setTimeout(() => process.exit(code), 3_000).unref();
  close()
    .catch(() => undefined)
    .finally(() => process.exit(code));
}
setTimeout(() => shutdown(2), HARD_LIMIT_MS).unref();
process.on('disconnect', () => shutdown(0));
process.on('SIGINT', () => shutdown(130));
process.on('SIGTERM', () => shutdown(143));

/** CPU ms of one thread of this process (Linux: /proc/self/task/<tid>/stat, 10 ms ticks); NaN elsewhere. */
function threadCpuMs(tid) {
  try {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return Number.NaN;
  }
}

/** CPU ms of every thread, by thread ID (Linux), for `BENCH_THREAD_CPU=1`. */
function threadsCpuMs() {
  try {
    return Object.fromEntries(readdirSync('/proc/self/task').map((tid) => [tid, threadCpuMs(tid)]));
  } catch {
    return {};
  }
}

/** CPU ms of every thread since the reset. */
function threadsSinceReset() {
  return Object.fromEntries(Object.entries(threadsCpuMs()).map(([tid, ms]) => [tid, ms - (threadsAtStart[tid] ?? 0)]));
}

/** Resolves once the vote listener has been called `expect` times since the reset, or after `timeoutMs`. */
async function drained(expect, timeoutMs) {
  const deadline = performance.now() + timeoutMs;
  while (seen.hooked < expect && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
}

let cpuAtStart = process.cpuUsage();
let mainCpuAtStart = threadCpuMs(process.pid);
let commitsAtStart = 0;
let threadsAtStart = {};
let startedAt = performance.now();
/** The event loop's delay and the GC pauses since the reset. */
const loopDelay = monitorEventLoopDelay({ resolution: 1 });
const gc = { count: 0, totalMs: 0, maxMs: 0 };
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    gc.count += 1;
    gc.totalMs += entry.duration;
    gc.maxMs = Math.max(gc.maxMs, entry.duration);
  }
}).observe({ entryTypes: ['gc'] });

/** The measured phase's stats, from the reset to now. */
function statsNow() {
  const cpu = process.cpuUsage(cpuAtStart);
  const now = counters();
  return {
    ...seen,
    handled: now.handled - countersAtReset.handled,
    accepted: now.accepted - countersAtReset.accepted,
    duplicates: now.duplicates - countersAtReset.duplicates,
    cpuMs: (cpu.user + cpu.system) / 1000,
    mainThreadCpuMs: threadCpuMs(process.pid) - mainCpuAtStart,
    commits: commitsNow() - commitsAtStart,
    ...(env.BENCH_THREAD_CPU === '1' ? { threads: threadsSinceReset() } : {}),
    wallMs: performance.now() - startedAt,
    loopDelayP99Ms: loopDelay.percentile(99) / 1e6,
    loopDelayMaxMs: loopDelay.max / 1e6,
    gc: { ...gc },
    rssBytes: process.memoryUsage().rss,
  };
}

/** Writes the measured phase's profiles, one per run; the sidecar says how many deliveries they cover. */
async function writeProfiles(stats) {
  for (const [dir, stop, ext] of [
    [PROFILE_DIR, stopCpuProfile, 'cpuprofile'],
    [HEAP_PROFILE_DIR, stopHeapSampling, 'heapprofile'],
  ]) {
    if (!dir) continue;
    const base = join(dir, `${target}-${process.pid}`);
    await stop(`${base}.${ext}`);
    writeFileSync(`${base}.json`, JSON.stringify({ target, ...stats }));
  }
}

process.on('message', async (message) => {
  if (message?.reset) {
    if (PROFILE_DIR) await startCpuProfile();
    if (HEAP_PROFILE_DIR) await startHeapSampling();
    cpuAtStart = process.cpuUsage();
    mainCpuAtStart = threadCpuMs(process.pid);
    threadsAtStart = threadsCpuMs();
    commitsAtStart = commitsNow();
    startedAt = performance.now();
    loopDelay.reset();
    loopDelay.enable();
    Object.assign(gc, { count: 0, totalMs: 0, maxMs: 0 });
    seen.handled = seen.accepted = seen.duplicates = seen.hooked = seen.logLines = 0;
    countersAtReset = { ...counters() };
    process.send({ reset: true });
  } else if (message?.drain) {
    await drained(Number(message.expect ?? 0), Number(message.drain));
    process.send({ drained: { hookTimes, hooked: seen.hooked } });
    hookTimes = [];
  } else if (message?.stop) {
    const stats = statsNow();
    await writeProfiles(stats);
    await close().catch(() => undefined);
    // Before the answer: the bench may kill this process as soon as it has the stats.
    removeScratches();
    process.send({ stats }, () => process.exit(0));
  }
});

const url = await start();
process.send({ ready: true, url });
