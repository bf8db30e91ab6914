/**
 * Instructions per delivery of the durable receiver, counted by valgrind's callgrind: a measure
 * that does not move with the machine's load (CPU time on a shared 2-core machine does, by 10%
 * and more), for comparing two builds. Not a target of issue 33; run by hand:
 *
 *   npm run build && BENCH_BASE_DIST=<other checkout>/dist npx vitest bench --run bench/receiver-instructions.bench.ts
 *
 * Per round and build: bench/helpers/webhook-target.mjs `receiver` (the target of
 * bench/webhooks.bench.ts) in a fresh process under `valgrind --tool=callgrind`; `WARMUP` signed
 * 1 KiB `vote.create` deliveries, every one a distinct vote, from `CONCURRENCY` keep-alive
 * connections; callgrind's counters zeroed (`callgrind_control -z`); `COUNT` more deliveries,
 * until the vote listener has seen each; the counters dumped (`callgrind_control -d`). The figures
 * are the dump's instructions over `COUNT`: of every thread (the thread pool's writes and fsyncs,
 * V8's compiler and collector threads), and of the event loop's thread alone. Compare the second:
 * the first is mostly the optimising compiler's threads, whose work depends on when it runs (on
 * 2026-12-02 the two builds' totals moved opposite to their main threads'). The builds alternate,
 * the order reversed each round.
 *
 * `BENCH_ROUNDS` (default 3), `BENCH_INSTRUCTIONS_COUNT` (default 2000), `BENCH_INSTRUCTIONS_OUT`
 * (keep the callgrind files there, for `callgrind_annotate`; default a temp directory, removed).
 * Needs valgrind; JIT code counts under `???` in an annotation, node's own functions by name. The
 * target ends itself 180 s after its start: on a machine at load 10 and more, it does not get to
 * "ready" under valgrind in time; run it on a machine less loaded.
 */
import { execFileSync, fork } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent, fetch } from 'undici';
import { bench, describe } from 'vitest';
import { startBenchService, type BenchService } from './helpers/service.js';
import { median } from './helpers/stats.js';
import { loadAverage, machineNote, TARGET_V1_SECRET, targetEnv, voteCreateDeliveries, type Delivery } from './helpers/webhook-load.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const COUNT = Number(process.env.BENCH_INSTRUCTIONS_COUNT ?? 2000);
const WARMUP = 500;
const CONCURRENCY = 8;
const BASE_DIST = process.env.BENCH_BASE_DIST;
const KEEP = process.env.BENCH_INSTRUCTIONS_OUT;
const TARGET_SCRIPT = fileURLToPath(new URL('./helpers/webhook-target.mjs', import.meta.url));

/** Instructions per delivery: every thread's, and the event loop's thread alone. */
interface Counts {
  all: number;
  main: number;
  /** Measured deliveries answered 503 and sent again. */
  retried: number;
}

interface Build {
  label: string;
  dist: string | undefined;
}

/**
 * Posts `deliveries` over `CONCURRENCY` keep-alive connections. A 503 (not recorded within the
 * receiver's answer deadline, which valgrind's slowdown can pass) is sent again, as the service
 * does; any other non-2xx throws. Returns how many were sent again: they are in the count.
 */
async function send(url: string, deliveries: readonly Delivery[], dispatcher: Agent): Promise<number> {
  let next = 0;
  let retried = 0;
  const worker = async () => {
    while (next < deliveries.length) {
      const delivery = deliveries[next++]!;
      for (;;) {
        const response = await fetch(url, { method: 'POST', headers: delivery.headers, body: delivery.body, dispatcher });
        await response.arrayBuffer();
        if (response.status >= 200 && response.status <= 299) break;
        if (response.status !== 503) throw new Error(`answered ${response.status}`);
        retried += 1;
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return retried;
}

/** The total of a callgrind dump's `Ir` (its `summary:` or `totals:` line). */
function instructionsOf(file: string): number {
  const line = /^(?:summary|totals): *(\d+)/m.exec(readFileSync(file, 'utf8'));
  if (!line) throw new Error(`no totals in ${file}`);
  return Number(line[1]);
}

/** Instructions of one dump (`--separate-threads`: a file per thread, `-01` the main thread's): every thread's, the main one's. */
function dumpOf(outDir: string, prefix: string): Omit<Counts, 'retried'> {
  const files = readdirSync(outDir).filter((name) => name.startsWith(`${prefix}-`));
  const main = files.find((name) => name.endsWith('-01'));
  if (main === undefined) throw new Error(`no dump of the main thread (${prefix}-01) in ${outDir}`);
  const all = files.reduce((sum, name) => sum + instructionsOf(join(outDir, name)), 0);
  return { all, main: instructionsOf(join(outDir, main)) };
}

/** One build's instructions per delivery, in a fresh process under callgrind. */
async function measure(build: Build, pool: readonly Delivery[], service: BenchService, outDir: string): Promise<Counts> {
  const child = fork(TARGET_SCRIPT, ['receiver'], {
    execPath: 'valgrind',
    execArgv: ['-q', '--tool=callgrind', '--dump-instr=no', '--separate-threads=yes', `--callgrind-out-file=${join(outDir, `${build.label}.%p`)}`, process.execPath],
    env: {
      ...process.env,
      NODE_ENV: 'production',
      ...targetEnv(service, build.dist),
    },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const next = (key: string, timeoutMs: number) =>
    new Promise<Record<string, unknown>>((done, fail) => {
      const timer = setTimeout(() => fail(new Error(`${build.label}: no "${key}" within ${timeoutMs} ms`)), timeoutMs);
      const onMessage = (message: Record<string, unknown>) => {
        if (!(key in message)) return;
        clearTimeout(timer);
        child.off('message', onMessage);
        done(message);
      };
      child.on('message', onMessage);
      // The target ends itself 180 s after its start (webhook-target.mjs): under valgrind on a loaded machine, before "ready".
      child.once('exit', (code) => fail(new Error(`${build.label}: the target exited (${code}) before "${key}"`)));
    });
  const dispatcher = new Agent({ connections: CONCURRENCY, headersTimeout: 120_000, bodyTimeout: 120_000 });
  try {
    const url = String((await next('ready', 300_000)).url);
    await send(url, pool.slice(0, WARMUP), dispatcher);
    const reset = next('reset', 60_000);
    child.send({ reset: true });
    await reset;
    const pid = String(child.pid);
    execFileSync('callgrind_control', ['-z', pid], { stdio: 'ignore' });
    const retried = await send(url, pool.slice(WARMUP, WARMUP + COUNT), dispatcher);
    const drained = next('drained', 120_000);
    child.send({ drain: 100_000, expect: COUNT });
    const { hooked } = (await drained).drained as { hooked: number };
    if (hooked < COUNT) throw new Error(`${build.label}: the listener saw ${hooked} of ${COUNT} votes`);
    execFileSync('callgrind_control', ['-d', pid], { stdio: 'ignore' });
    const counts = dumpOf(outDir, `${build.label}.${pid}.1`);
    return { all: counts.all / COUNT, main: counts.main / COUNT, retried };
  } finally {
    await dispatcher.close();
    child.kill('SIGKILL');
  }
}

async function run(): Promise<void> {
  const loadBefore = loadAverage();
  const builds: Build[] = [{ label: 'this', dist: undefined }];
  if (BASE_DIST) builds.push({ label: 'base', dist: resolve(BASE_DIST) });
  const outDir = KEEP ?? mkdtempSync(join(tmpdir(), 'receiver-instructions-'));
  const service = await startBenchService();
  const results = new Map<Build, Counts[]>(builds.map((build) => [build, []]));
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const pool = voteCreateDeliveries({
        count: WARMUP + COUNT,
        secret: TARGET_V1_SECRET,
        projectId: service.projectId,
        botId: service.platformId,
        nowMs: Date.now(),
      });
      for (const build of round % 2 === 0 ? builds : [...builds].reverse()) {
        results.get(build)!.push(await measure(build, pool, service, outDir));
      }
    }
  } finally {
    await service.close();
    if (!KEEP) rmSync(outDir, { recursive: true, force: true });
  }
  const thousands = (value: number) => `${(value / 1000).toFixed(1)} k`;
  const cell = (values: number[]) => `**${thousands(median(values))}** (${values.map(thousands).join(' / ')})`;
  const lines = [
    '| build | instructions per delivery, every thread, median (each round) | main thread alone | sent again after a 503 |',
    '| --- | ---: | ---: | ---: |',
  ];
  for (const [build, counts] of results) {
    const name = build.dist ? `base: ${build.dist}` : 'this checkout';
    const retried = counts.map((c) => c.retried).join(' / ');
    lines.push(`| ${name} | ${cell(counts.map((c) => c.all))} | ${cell(counts.map((c) => c.main))} | ${retried} |`);
  }
  const notes = `${COUNT} deliveries measured after ${WARMUP} warm-up ones, ${CONCURRENCY} connections, callgrind, ${ROUNDS} rounds.`;
  console.log(`\nReceiver instructions:\n\n${lines.join('\n')}\n\n${machineNote(loadBefore, loadAverage())} ${notes}\n`);
}

describe('receiver instructions', () => {
  bench(`callgrind, ${COUNT} deliveries x ${ROUNDS} rounds`, run, { iterations: 1, time: 0, warmupIterations: 0, warmupTime: 0 });
});
