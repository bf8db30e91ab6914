/**
 * One server under load for bench/webhooks.bench.ts, in a process of its own (so it does not share
 * an event loop with the load generator). Started by the bench with `fork()`:
 *
 *   node bench/helpers/webhook-target.mjs <target>
 *
 * targets: `receiver` (our receiver, no-op pipeline), `receiver-ledger` (our receiver, the real
 * vote pipeline on the file ledger, one no-op in-process hook), `receiver-redis` (the same on the
 * Redis ledger at BENCH_REDIS_URL), `topgg-sdk` (@top-gg/sdk's
 * `Webhook.listener` on Express), `bare` (node:http, HMAC check only, 204). Ours log as the
 * daemon does by default (`info`, JSON lines; see `daemonLogger`).
 *
 * Environment: BENCH_V1_SECRET (the `whs_...` secret of v1 deliveries), BENCH_V0_SECRET (the
 * legacy `Authorization` secret), BENCH_PROJECT_ID, BENCH_PATH (the webhook path);
 * BENCH_CPU_PROFILE_DIR (optional): a CPU profile of the measured phase, from the reset to the
 * stop, is written there as `<target>-<pid>.cpuprofile` with `<target>-<pid>.json` (its stats);
 * BENCH_HEAP_PROFILE_DIR (optional): likewise a sampling heap profile, `<target>-<pid>.heapprofile`.
 *
 * BENCH_RECORD_HOOK_TIMES=1: the in-process hook records the monotonic clock at each call; on
 * `{ drain: <ms> }` the child waits until the pipeline is idle (at most that long) and answers
 * `{ drained: { hookTimes, hooked } }` (bench/latency.bench.ts).
 *
 * Protocol (IPC): the child sends `{ ready: true, url }` (the webhook URL, path included) once it listens; on `{ stop: true }` it
 * sends `{ stats }` (its CPU time and what its handler saw) and exits. It exits by itself when the
 * parent goes away (IPC disconnect) and after a hard limit of 120 s, so it can never outlive the bench.
 *
 * Our receiver is TypeScript: this script imports the built `dist/` (`npm run build` first; the
 * bench checks that dist/ is not older than src/webhooks/).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Writable } from 'node:stream';
import { startCpuProfile, startHeapSampling, stopCpuProfile, stopHeapSampling } from './profile.mjs';

const target = process.argv[2];
const V1_SECRET = process.env.BENCH_V1_SECRET ?? '';
const V0_SECRET = process.env.BENCH_V0_SECRET ?? '';
const PROJECT_ID = process.env.BENCH_PROJECT_ID ?? '';
const PATH = process.env.BENCH_PATH ?? '/webhook';
const HARD_LIMIT_MS = 120_000;
/**
 * `BENCH_DIST`: the built agent to load (default this repository's dist/), so that one bench run
 * can alternate two builds (bench/webhooks.bench.ts, `BENCH_BASE_DIST`).
 */
const DIST = process.env.BENCH_DIST ? pathToFileURL(`${resolve(process.env.BENCH_DIST)}/`) : new URL('../../dist/', import.meta.url);
const fromDist = (path) => import(new URL(path, DIST).href);
/** `BENCH_CPU_PROFILE_DIR`: write a CPU profile of the measured phase there (bench/PROFILE.md). */
const PROFILE_DIR = process.env.BENCH_CPU_PROFILE_DIR;
/** `BENCH_HEAP_PROFILE_DIR`: likewise, a sampling heap profile of every allocation in the measured phase. */
const HEAP_PROFILE_DIR = process.env.BENCH_HEAP_PROFILE_DIR;

if (!process.send) throw new Error('webhook-target.mjs is started by bench/webhooks.bench.ts (fork, with IPC)');
if (!V1_SECRET || !V0_SECRET || !PROJECT_ID) throw new Error('BENCH_V1_SECRET, BENCH_V0_SECRET and BENCH_PROJECT_ID are required');

/** What the handler saw, reported at stop (a target that answers 2xx without doing the work is not measured). */
const seen = { handled: 0, accepted: 0, duplicates: 0, hooked: 0, logLines: 0 };
/** The ledger's commits so far (the file ledger's group commits: one write + fsync each). */
let commitsNow = () => 0;
/** Resolves once the pipeline has no vote left to run (or after `timeoutMs`). */
let drainPipeline = async () => {};
/** `BENCH_RECORD_HOOK_TIMES=1`: the in-process hook notes each call (bench/latency.bench.ts). */
const RECORD_HOOK_TIMES = process.env.BENCH_RECORD_HOOK_TIMES === '1';
/** Pairs of user ID, `process.hrtime.bigint()` as text, one per hook call: flat, so the IPC message stays small. */
let hookTimes = [];
/** Set by each target: stops its server and whatever it owns. */
let close = async () => {};

// ---------------------------------------------------------------------------------------------
// (c) The practical ceiling: node:http, read the body, check `t` and the v1 HMAC in constant time, 204.
function bareServer() {
  const TOLERANCE_S = 300;
  const secret = Buffer.from(V1_SECRET);
  const server = createServer((req, res) => {
    if (req.method !== 'POST' || req.url !== PATH) {
      res.writeHead(404).end();
      return;
    }
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
      const header = req.headers['x-topgg-signature'];
      const match = typeof header === 'string' ? /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header) : null;
      if (!match || Math.abs(Date.now() / 1000 - Number(match[1])) > TOLERANCE_S) {
        res.writeHead(401).end();
        return;
      }
      const expected = createHmac('sha256', secret).update(`${match[1]}.`).update(body).digest();
      if (!timingSafeEqual(expected, Buffer.from(match[2], 'hex'))) {
        res.writeHead(401).end();
        return;
      }
      seen.handled += 1;
      res.writeHead(204).end();
    });
  });
  return listen(server);
}

// ---------------------------------------------------------------------------------------------
// (b) What users would otherwise pick: @top-gg/sdk's Webhook.listener on Express (legacy scheme).
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
  return listen(server);
}

// ---------------------------------------------------------------------------------------------
// (a) Ours. `ledger`: `file`, the real vote pipeline on the file ledger in a temp directory (fsync
// on every commit, one no-op in-process hook); `redis`, the same on the Redis ledger
// (BENCH_REDIS_URL, a redis-server with appendfsync always); `none`, a no-op pipeline, so neither
// the disk nor Redis is measured.
async function receiverServer(ledger) {
  const { createWebhookReceiver } = await fromDist('webhooks/receiver.js');
  const logger = await daemonLogger();
  let pipeline;
  let teardown = async () => {};
  if (ledger !== 'none') {
    const { createVotePipeline } = await fromDist('votes/pipeline.js');
    const { createInProcessHook } = await fromDist('votes/hooks/in-process.js');
    const { voteLedger, release } = ledger === 'redis' ? await redisLedger() : await fileLedger();
    const hook = createInProcessHook({
      listeners: () => [
        async (vote) => {
          seen.hooked += 1;
          // The monotonic clock is one for every process of the machine: the sender compares.
          if (RECORD_HOOK_TIMES) hookTimes.push(vote.userId, String(process.hrtime.bigint()));
        },
      ],
    });
    const real = createVotePipeline({ ledger: voteLedger, hooks: [hook], logger, now: Date.now });
    await real.start();
    pipeline = {
      async ingest(votes, road) {
        const result = await real.ingest(votes, road);
        seen.handled += votes.length;
        seen.accepted += result.accepted.length;
        seen.duplicates += result.duplicates;
        return result;
      },
    };
    commitsNow = () => voteLedger.stats?.().commits ?? 0;
    drainPipeline = async (timeoutMs) => {
      let timer;
      const timeout = new Promise((resolve) => (timer = setTimeout(resolve, timeoutMs)));
      await Promise.race([real.idle(), timeout]);
      clearTimeout(timer);
    };
    teardown = async () => {
      await real.stop(Date.now() + 2_000);
      await release();
    };
  } else {
    pipeline = {
      async ingest(votes) {
        seen.handled += votes.length;
        seen.accepted += votes.length;
        return { accepted: votes, duplicates: 0 };
      },
    };
  }
  const receiver = createWebhookReceiver({
    listen: { host: '127.0.0.1', port: 0 },
    path: PATH,
    secrets: [V1_SECRET],
    pipeline,
    // Only v0 deliveries need it; v1 `vote.create` carries its project.
    projectId: () => PROJECT_ID,
    logger,
  });
  const url = await receiver.start(); // with the path
  close = async () => {
    await receiver.stop();
    await teardown();
  };
  return url;
}

/** The file ledger in a temp directory, removed however the process ends. */
async function fileLedger() {
  const { createFileVoteLedger } = await fromDist('votes/ledger-file.js');
  const directory = mkdtempSync(join(tmpdir(), 'listing-agent-webhooks-bench-'));
  // Gone however the process ends (a stop, the parent going away, the hard limit).
  process.on('exit', () => rmSync(directory, { recursive: true, force: true }));
  const voteLedger = createFileVoteLedger({ directory });
  return {
    voteLedger,
    release: async () => {
      await voteLedger.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

/** The Redis ledger on BENCH_REDIS_URL, under a prefix of its own (the server is the bench's, thrown away after). */
async function redisLedger() {
  const url = process.env.BENCH_REDIS_URL;
  if (!url) throw new Error('receiver-redis needs BENCH_REDIS_URL');
  const { createRedisConnection } = await fromDist('redis/connection.js');
  const { createRedisVoteLedger } = await fromDist('votes/ledger-redis.js');
  const connection = createRedisConnection({ url, prefix: `bench-webhooks-${process.pid}:` });
  connection.start();
  await connection.whenUp({ timeoutMs: 10_000 });
  const voteLedger = createRedisVoteLedger({ connection, agentId: `bench-${process.pid}`, leaseMs: 30_000, keepKeysForMs: 3_600_000 });
  return {
    voteLedger,
    release: async () => {
      await voteLedger.close();
      await connection.close();
    },
  };
}

/**
 * The daemon's logger as `listing-agent run` makes it, at the default level (`info`) in JSON
 * lines: whatever the receiver and the pipeline log at that level is part of what is measured.
 * The lines go to /dev/null with one synchronous write each (as to stdout on a file or a pipe on
 * Linux), counted for the report.
 */
async function daemonLogger() {
  const { createLogger } = await fromDist('log/logger.js');
  const fd = openSync('/dev/null', 'w');
  const destination = new Writable({
    write(chunk, _encoding, done) {
      writeSync(fd, chunk);
      seen.logLines += 1;
      done();
    },
  });
  return createLogger({ level: 'info', format: 'json', destination, secrets: [V1_SECRET, V0_SECRET] });
}

// ---------------------------------------------------------------------------------------------
function listen(server) {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      close = () =>
        new Promise((done) => {
          server.close(() => done());
          server.closeAllConnections();
        });
      resolve(`http://127.0.0.1:${server.address().port}${PATH}`);
    });
  });
}

const starters = {
  bare: bareServer,
  'topgg-sdk': topggSdkServer,
  receiver: () => receiverServer('none'),
  'receiver-ledger': () => receiverServer('file'),
  'receiver-redis': () => receiverServer('redis'),
};
const start = starters[target];
if (!start) throw new Error(`unknown target ${target}: one of ${Object.keys(starters).join(', ')}`);

/** Stops the server (removing the ledger's temp directory), then exits; at most 2 s. */
function shutdown(code) {
  setTimeout(() => process.exit(code), 2_000).unref();
  close()
    .catch(() => undefined)
    .finally(() => process.exit(code));
}
const hardLimit = setTimeout(() => shutdown(2), HARD_LIMIT_MS);
hardLimit.unref();
process.on('disconnect', () => shutdown(0));
process.on('SIGINT', () => shutdown(130));
process.on('SIGTERM', () => shutdown(143));

/**
 * CPU time of the main thread alone (Linux: /proc/self/task/<pid>/stat, 10 ms ticks), ms; NaN
 * elsewhere. The rest of the process's CPU is its helper threads: libuv's pool (the ledger's
 * write and fsync) and V8's (concurrent and parallel garbage collection, compilation).
 */
function mainThreadCpuMs() {
  return threadCpuMs(process.pid);
}

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

let cpuAtStart = process.cpuUsage();
let mainCpuAtStart = mainThreadCpuMs();
let commitsAtStart = 0;
let threadsAtStart = {};
let startedAt = performance.now();
process.on('message', async (message) => {
  if (message?.reset) {
    // The measured phase begins (after the warm-up): CPU and counters from here.
    if (PROFILE_DIR) await startCpuProfile();
    if (HEAP_PROFILE_DIR) await startHeapSampling();
    cpuAtStart = process.cpuUsage();
    mainCpuAtStart = mainThreadCpuMs();
    threadsAtStart = threadsCpuMs();
    commitsAtStart = commitsNow();
    startedAt = performance.now();
    seen.handled = seen.accepted = seen.duplicates = seen.hooked = seen.logLines = 0;
    process.send({ reset: true });
    return;
  }
  if (message?.drain) {
    // Every acknowledged vote's hook must have run: wait for the pipeline, then hand the times over.
    await drainPipeline(Number(message.drain));
    process.send({ drained: { hookTimes, hooked: seen.hooked } });
    hookTimes = [];
    return;
  }
  if (message?.stop) {
    const cpu = process.cpuUsage(cpuAtStart);
    const wallMs = performance.now() - startedAt;
    const stats = {
      ...seen,
      cpuMs: (cpu.user + cpu.system) / 1000,
      mainThreadCpuMs: mainThreadCpuMs() - mainCpuAtStart,
      commits: commitsNow() - commitsAtStart,
      ...(process.env.BENCH_THREAD_CPU === '1'
        ? { threads: Object.fromEntries(Object.entries(threadsCpuMs()).map(([tid, ms]) => [tid, ms - (threadsAtStart[tid] ?? 0)])) }
        : {}),
      wallMs,
      rssBytes: process.memoryUsage().rss,
    };
    // One profile per measured run; the sidecar says how many deliveries it covers.
    if (PROFILE_DIR) {
      const base = join(PROFILE_DIR, `${target}-${process.pid}`);
      await stopCpuProfile(`${base}.cpuprofile`);
      writeFileSync(`${base}.json`, JSON.stringify({ target, ...stats }));
    }
    if (HEAP_PROFILE_DIR) {
      const base = join(HEAP_PROFILE_DIR, `${target}-${process.pid}`);
      await stopHeapSampling(`${base}.heapprofile`);
      writeFileSync(`${base}.json`, JSON.stringify({ target, ...stats }));
    }
    await close().catch(() => undefined);
    process.send({ stats }, () => process.exit(0));
  }
});

const url = await start();
process.send({ ready: true, url });
