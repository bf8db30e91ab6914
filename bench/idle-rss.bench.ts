/**
 * Idle RSS of the daemon (issue 20, target 4), fast and side by side: each round starts one daemon
 * of the footprint bench's row (a) (stats from push, votes, webhooks, health) per variant, plus
 * row (L) (the daemon's libraries imported, two full collections, idle), all at the same time,
 * and reads VmRSS of /proc/<pid>/status once they are idle (`BENCH_SETTLE_SECONDS`, default 20,
 * after the first post; the mean of 5 one-second samples). Reports each round's RSS, (L) and the
 * gap (a) − (L) against the target gap of 8 MiB.
 *
 * Variants: `plain` (`node dist/cli/main.js run`, nothing set: what the bin and `node dist/cli/main.js`
 * get, the daemon's own steps in src/cli/idle-memory.ts included), `packaged` (as the Dockerfile and
 * the systemd unit start it: helpers/daemon.ts PACKAGED), and trials. `BENCH_IDLE_VARIANTS`
 * (comma-separated labels, default `plain,packaged`); `BENCH_BASELINE_CLI` points the `plain`
 * and trial variants at another build (e.g. main's dist/). `BENCH_IDLE_SERIES=1` also prints
 * each process's VmRSS every 3 s from the first post.
 *
 * Run:  npm run build && npx vitest bench --run bench/idle-rss.bench.ts   (about 30 s a round)
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { bench, describe } from 'vitest';
import { startEmulator } from '../src/emulator/index.js';
import { mallocHeaps } from './helpers/proc.js';
import { assertBuilt, CLI_PATH, PACKAGED, machine, pushCounts, ROOT, sleep, spawnDaemon, table, until } from './helpers/daemon.js';

const ROUNDS = Number(process.env.BENCH_IDLE_ROUNDS ?? 6);
const SETTLE_MS = Number(process.env.BENCH_SETTLE_SECONDS ?? 20) * 1000;
const SAMPLES = 5;
const TARGET_GAP = 8 * 2 ** 20;
const SHARDS = [617, 617];
const MMAP = { MALLOC_MMAP_THRESHOLD_: '131072' };
const GC_ONCE = ['--expose-gc', '--import', join(ROOT, 'bench', 'helpers', 'gc-once.mjs')];

interface Variant {
  label: string;
  cliPath?: string;
  nodeArgs?: string[];
  env?: Record<string, string>;
}

const BASELINE = process.env.BENCH_BASELINE_CLI ?? CLI_PATH;
const ALL: Variant[] = [
  { label: 'plain', cliPath: BASELINE },
  { label: 'packaged', nodeArgs: [...PACKAGED.nodeArgs], env: { ...PACKAGED.env } },
  // Trials (docs/decisions/measurements-before-issue-33.md, "Footprint"): each setting alone, and what was not kept.
  { label: 'mmap', env: MMAP, cliPath: BASELINE },
  { label: 'semi 2', nodeArgs: ['--max-semi-space-size=2'], cliPath: BASELINE },
  { label: 'semi 1 + mmap', nodeArgs: ['--max-semi-space-size=1'], env: MMAP, cliPath: BASELINE },
  { label: 'stgc + mmap', nodeArgs: ['--single-threaded-gc'], env: MMAP, cliPath: BASELINE },
  { label: 'packaged + arena max 2', nodeArgs: [...PACKAGED.nodeArgs], env: { ...PACKAGED.env, MALLOC_ARENA_MAX: '2' } },
  { label: 'packaged with mmap 32 KiB', nodeArgs: [...PACKAGED.nodeArgs], env: { MALLOC_MMAP_THRESHOLD_: '32768' } },
  { label: 'gc-once', nodeArgs: GC_ONCE, cliPath: BASELINE },
];
const wanted = process.env.BENCH_IDLE_VARIANTS?.split(',').map((s) => s.trim());
const VARIANTS = ALL.filter((v) => (wanted ?? ['plain', 'packaged']).includes(v.label));

const vmRss = (pid: number) => Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? Number.NaN) * 1024;

async function meanRss(pid: number): Promise<number> {
  let sum = 0;
  for (let i = 0; i < SAMPLES; i++) {
    sum += vmRss(pid);
    await sleep(1_000);
  }
  return sum / SAMPLES;
}

interface Running {
  pid: number;
  ready: Promise<void>;
  stop(): Promise<void>;
}

async function daemon(variant: Variant): Promise<Running> {
  const emulator = await startEmulator();
  const owner = emulator.admin.createUser({ username: 'bench-owner' });
  const token = emulator.admin.createProject({ platform: 'discord', type: 'bot', owner_user_id: owner.id, name: 'Bench Bot' }).project_token;
  const d = spawnDaemon({
    v1: emulator.urls.v1, v0: emulator.urls.v0, token, stats: { source: 'push' }, votes: true, webhooks: true, health: true,
    ...(variant.env ? { env: variant.env } : {}), ...(variant.nodeArgs ? { nodeArgs: variant.nodeArgs } : {}), ...(variant.cliPath ? { cliPath: variant.cliPath } : {}),
  });
  const ready = (async () => {
    const listening = await d.waitFor('push endpoint listening');
    await pushCounts(listening.url as string, SHARDS);
    await until(() => (emulator.admin.requests().some((r) => r.method === 'POST' && r.path.endsWith('/metrics/batch') && r.status < 300) ? true : undefined), 20_000, 'first post', 20);
  })();
  return { pid: d.child.pid!, ready, stop: async () => { await d.stop(); await emulator.close(); } };
}

/** Row (L) of the footprint bench, the same source. */
function libraries(): Running {
  const source = [
    ...['zod', 'pino', 'prom-client', 'croner', 'dotenv', 'undici'].map((name) => `await import('${name}');`),
    "(await import('node:http')).createServer().listen(0, '127.0.0.1');",
    'globalThis.gc(); globalThis.gc();',
    'setInterval(() => {}, 2 ** 30);',
  ].join(' ');
  const child = spawn(process.execPath, ['--expose-gc', '--input-type=module', '-e', source], { cwd: ROOT, stdio: 'ignore' });
  return {
    pid: child.pid!,
    ready: sleep(1_000).then(() => undefined),
    stop: async () => {
      child.kill();
      await new Promise((resolve) => child.on('exit', resolve));
    },
  };
}

/** Where the bytes are: RssFile, then of RssAnon the malloc thread arenas, the main arena, and the rest (V8's heap and other mmaps). */
function breakdown(pid: number): string {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN) * 1024;
  const heaps = mallocHeaps(pid);
  const arenas = heaps.threadArenas.reduce((sum, a) => sum + a.rss, 0);
  const anon = kb('RssAnon');
  return `f${m(kb('RssFile'))} a${m(anon)} [ar${heaps.threadArenas.length}:${m(arenas)} h${m(heaps.mainRss)} o${m(anon - arenas - heaps.mainRss)}]`;
}

/** Waits SETTLE_MS; with `BENCH_IDLE_SERIES=1`, records each process's VmRSS every 3 s meanwhile (printed at the end). */
async function settle(processes: Running[], series: string[]): Promise<void> {
  if (process.env.BENCH_IDLE_SERIES !== '1') {
    await sleep(SETTLE_MS);
    return;
  }
  const lines: number[][] = processes.map(() => []);
  for (let t = 0; t < SETTLE_MS; t += 3_000) {
    processes.forEach((p, i) => lines[i]!.push(vmRss(p.pid)));
    await sleep(3_000);
  }
  series.push(...lines.map((l, i) => `${i === 0 ? '(L)' : VARIANTS[i - 1]!.label}: ${l.map(m).join(' ')}`), '');
}

const m = (bytes: number) => (bytes / 2 ** 20).toFixed(1);
const signed = (bytes: number) => `${bytes >= 0 ? '+' : '−'}${m(Math.abs(bytes))}`;
const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

async function run(): Promise<string> {
  assertBuilt();
  const header = await machine();
  const rows: string[][] = [];
  const details: string[][] = [];
  const series: string[] = [];
  const gaps = new Map<string, number[]>(VARIANTS.map((v) => [v.label, []]));
  for (let round = 1; round <= ROUNDS; round++) {
    const floor = libraries();
    const daemons = await Promise.all(VARIANTS.map((v) => daemon(v)));
    try {
      await Promise.all([floor.ready, ...daemons.map((d) => d.ready)]);
      await settle([floor, ...daemons], series);
      const [l, ...rss] = await Promise.all([meanRss(floor.pid), ...daemons.map((d) => meanRss(d.pid))]);
      details.push([String(round), breakdown(floor.pid), ...daemons.map((d) => breakdown(d.pid))]);
      rows.push([String(round), m(l!), ...rss.map((r, i) => {
        gaps.get(VARIANTS[i]!.label)!.push(r - l!);
        return `${m(r)} (${signed(r - l!)})`;
      })]);
    } finally {
      await Promise.all([floor.stop(), ...daemons.map((d) => d.stop())]);
    }
  }
  const summary = VARIANTS.map((v) => {
    const g = gaps.get(v.label)!;
    const within = g.filter((x) => x <= TARGET_GAP).length;
    return [v.label, `${signed(Math.min(...g))} / ${signed(median(g))} / ${signed(Math.max(...g))}`, `${within}/${g.length}`, within === g.length ? 'met' : '**not met**'];
  });
  return [
    '',
    `Idle RSS (VmRSS, MiB; mean of ${SAMPLES} samples ${SETTLE_MS / 1000} s after the first post), ${ROUNDS} rounds, variants side by side; in brackets (a) − (L). ${header}`,
    '',
    table(['round', '(L) libraries', ...VARIANTS.map((v) => v.label)], rows, ['r', 'r', ...VARIANTS.map(() => 'r' as const)]),
    '',
    'Where the bytes are at the end: f RssFile, a RssAnon [ar thread arenas count: RSS, h main arena, o the rest of RssAnon (V8 heap, other mappings)].',
    '',
    table(['round', '(L) libraries', ...VARIANTS.map((v) => v.label)], details),
    '',
    ...(series.length > 0 ? ['VmRSS every 3 s from the first post:', '', ...series] : []),
    table(['variant', 'gap (a) − (L), min / median / max', 'rounds within 8 MiB', 'target'], summary, ['l', 'r', 'r', 'l']),
    '',
  ].join('\n');
}

describe('idle rss', () => {
  bench(`idle RSS of the daemon, ${VARIANTS.length} variants, ${ROUNDS} rounds`, async () => console.log(await run()), { iterations: 1, time: 0, warmupIterations: 0, warmupTime: 0 });
});
