/**
 * Durable ingestion and the reminders it holds (issue 33), the agent as a bot owner embeds it:
 * 100,000 votes of distinct voters through `agent.votePipeline` in pages of 100 (as the poller
 * hands them over: each page awaited, so each costs at least one durable journal commit), into
 * the default durable (file) pipeline, to one `agent.on('vote')` listener. The work is
 * bench/helpers/votes-ingest.mjs, on the built dist/, one child process per run
 * (`node --expose-gc`), against the emulator in this process.
 *
 * Run:  npm run bench:votes      (= npm run build && vitest bench --run bench/votes.bench.ts)
 *
 * `BENCH_ROUNDS` rounds (default 5), each a run with reminders off, then one with
 * `votes.reminders.enabled` (every vote scheduled, none due during the run). Targets, on the
 * medians:
 * - the runs with reminders off (the default): at least 10,000 votes/s, first page to the last
 *   listener call, and a peak RSS under 150 MiB: each run's highest of VmHWM (the kernel's
 *   high-water mark over the process's life, start-up included), the RSS this process sampled
 *   from /proc every 10 ms and the child's own samples every 5 ms;
 * - 100,000 reminders held in at most 30 MiB: the V8 heap plus array buffers after collections,
 *   everything still held, of the run with reminders on minus the run with them off, round by round.
 * `BENCH_INGEST_HELPER=<file>` runs another copy of the helper (one from another checkout, whose
 * dist/ it loads); `BENCH_CPU_PROFILE_DIR=<dir>` and `BENCH_HEAP_PROFILE_DIR=<dir>` write a profile
 * of each run's ingestion there, `ingest-<off|on>-<round>.cpuprofile` (bench/PROFILE.md).
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bench, describe } from 'vitest';
import { assertBuilt, machine, table } from './helpers/daemon.js';
import { mib, MiB, readProc } from './helpers/proc.js';
import { startBenchService, type BenchService } from './helpers/service.js';
import { median, verdict } from './helpers/stats.js';

const INGEST_PATH = process.env.BENCH_INGEST_HELPER ?? fileURLToPath(new URL('./helpers/votes-ingest.mjs', import.meta.url));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const RATE_TARGET = 10_000;
const PEAK_TARGET = 150 * MiB;
const REMINDERS_HELD_TARGET = 30 * MiB;

/** What bench/helpers/votes-ingest.mjs prints. */
interface IngestionResult {
  votes: number;
  page: number;
  reminders: boolean;
  scheduled: number;
  votesPerSecond: number;
  elapsedMs: number;
  cpuUsPerVote: number;
  /** RSS after start-up and collections, before the first page. */
  baselineRss: number;
  /** Highest RSS the child sampled (every 5 ms and at every page). */
  peakRss: number;
  /** V8 heap used plus array buffers after collections, everything still held. */
  heldAfterGc: number;
  vmHwm: number;
}

interface ChildResult extends IngestionResult {
  /** Highest VmRSS this process sampled from /proc/<pid>/status. */
  sampledPeak: number;
}

/** `BENCH_CPU_PROFILE_DIR`, `BENCH_HEAP_PROFILE_DIR`: a profile of each run's ingestion there (bench/PROFILE.md). */
function profiles(name: string): Record<string, string> {
  const { BENCH_CPU_PROFILE_DIR: cpu, BENCH_HEAP_PROFILE_DIR: heap, BENCH_HEAP_SURVIVORS: survivors } = process.env;
  return {
    ...(cpu ? { BENCH_CPU_PROFILE: join(cpu, `${name}.cpuprofile`) } : {}),
    ...(heap ? { BENCH_HEAP_PROFILE: join(heap, `${name}.heapprofile`) } : {}),
    ...(survivors ? { BENCH_HEAP_SURVIVORS: survivors } : {}),
  };
}

async function inChild(service: BenchService, reminders: boolean, round: number): Promise<ChildResult> {
  const child = spawn(process.execPath, ['--expose-gc', INGEST_PATH, ...(reminders ? ['--reminders'] : [])], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      PATH: process.env.PATH ?? '',
      NODE_ENV: 'production',
      BENCH_V1: service.v1,
      BENCH_V0: service.v0,
      BENCH_TOKEN: service.token,
      ...profiles(`ingest-${reminders ? 'on' : 'off'}-${round + 1}`),
    },
  });
  let out = '';
  let err = '';
  let sampledPeak = 0;
  const sampler = setInterval(() => {
    try {
      sampledPeak = Math.max(sampledPeak, readProc(child.pid!).rss);
    } catch {
      // exited
    }
  }, 10);
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  clearInterval(sampler);
  if (code !== 0) throw new Error(`votes-ingest.mjs exited ${code}: ${err}`);
  return { ...(JSON.parse(out) as IngestionResult), sampledPeak };
}

const count = (value: number) => Math.round(value).toLocaleString('en-US');
const peakOf = (run: ChildResult) => Math.max(run.vmHwm, run.sampledPeak, run.peakRss);
const each = (runs: readonly ChildResult[], format: (run: ChildResult) => string) => runs.map(format).join(' / ');

function report(off: readonly ChildResult[], on: readonly ChildResult[], header: string): string {
  const rate = median(off.map((run) => run.votesPerSecond));
  const peak = median(off.map(peakOf));
  const held = on.map((run, i) => run.heldAfterGc - off[i]!.heldAfterGc);
  const heldMedian = median(held);
  const { votes, page } = off[0]!;
  const rates = (runs: readonly ChildResult[]) => each(runs, (run) => count(run.votesPerSecond));
  const of = (runs: readonly ChildResult[], key: 'cpuUsPerVote' | 'heldAfterGc' | 'baselineRss') => median(runs.map((run) => run[key]));
  const targets = [
    [
      'durable ingestion: votes/s (first page to the last listener call)',
      `**${count(rate)}** (${rates(off)})`,
      `>= ${count(RATE_TARGET)}`,
      verdict(rate >= RATE_TARGET),
    ],
    [
      `durable ingestion: peak RSS of the process for ${count(votes)} votes`,
      `**${mib(peak)}** (${each(off, (run) => mib(peakOf(run)))})`,
      `< ${mib(PEAK_TARGET)}`,
      verdict(peak < PEAK_TARGET),
    ],
    [
      `${count(votes)} reminders held (heap + array buffers, on − off)`,
      `**${mib(heldMedian)}** (${held.map(mib).join(' / ')})`,
      `<= ${mib(REMINDERS_HELD_TARGET)}`,
      verdict(heldMedian <= REMINDERS_HELD_TARGET),
    ],
  ];
  const information = [
    ['votes/s with reminders on', `${count(median(on.map((run) => run.votesPerSecond)))} (${rates(on)})`],
    ['CPU per vote (every thread), off → on', `${of(off, 'cpuUsPerVote').toFixed(1)} → ${of(on, 'cpuUsPerVote').toFixed(1)} µs`],
    ['RSS before the first page (started, collected), off', mib(of(off, 'baselineRss'))],
    ['peak RSS with reminders on', mib(median(on.map(peakOf)))],
    ['held after the run (heap + array buffers), off → on', `${mib(of(off, 'heldAfterGc'))} → ${mib(of(on, 'heldAfterGc'))}`],
  ];
  return [
    '',
    `Durable ingestion: ${count(votes)} votes in pages of ${page} through agent.votePipeline (default file state, health on, one vote ` +
      `listener), ${ROUNDS} rounds of a run with reminders off then one with them on, each a process of its own. ${header}`,
    '',
    table(['target (median of the runs)', 'measured (each run)', 'target', ''], targets, ['l', 'r', 'l', 'l']),
    '',
    table(['information', 'median'], information, ['l', 'r']),
    '',
  ].join('\n');
}

async function run(): Promise<string> {
  assertBuilt();
  const header = await machine();
  const service = await startBenchService();
  try {
    const off: ChildResult[] = [];
    const on: ChildResult[] = [];
    // Off then on in each round: load that comes and goes on a shared machine falls on both.
    for (let round = 0; round < ROUNDS; round++) {
      off.push(await inChild(service, false, round));
      on.push(await inChild(service, true, round));
    }
    return report(off, on, header);
  } finally {
    await service.close();
  }
}

describe('durable ingestion', () => {
  bench(
    `100,000 votes through the agent's durable pipeline, reminders off and on, ${ROUNDS} rounds`,
    async () => {
      console.log(await run());
    },
    { iterations: 1, time: 0, warmupIterations: 0, warmupTime: 0 },
  );
});
