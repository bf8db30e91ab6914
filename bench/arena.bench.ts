/**
 * The daemon's run-to-run 10 MiB (issue 20, target 4): in some runs a glibc thread arena keeps
 * about 10 MiB of memory freed during start-up for the rest of the process's life. This bench
 * starts the daemon of the footprint bench's row (a) (stats from push, votes, webhooks, health)
 * under several malloc settings, one daemon per setting at the same time (so that each round's
 * machine is the same for all), `BENCH_ARENA_ROUNDS` rounds (default 5), and reports per setting
 * the idle RSS of each round and what the malloc heaps hold (from /proc/<pid>/smaps).
 *
 * Settings: glibc's default (8 arenas per core), `MALLOC_ARENA_MAX=2` and `MALLOC_ARENA_MAX=1`, a
 * fixed `MALLOC_MMAP_THRESHOLD_`, and jemalloc by `LD_PRELOAD` when the machine has it, each set
 * in the daemon's environment as a systemd unit's `Environment=` or a Dockerfile's `ENV` would.
 *
 * Run:  npm run build && npx vitest bench --run bench/arena.bench.ts   (about 40 s a round)
 */
import { existsSync, readFileSync } from 'node:fs';
import { bench, describe } from 'vitest';
import { startEmulator } from '../src/emulator/index.js';
import { assertBuilt, machine, pushCounts, sleep, spawnDaemon, table, until } from './helpers/daemon.js';
import { mallocHeaps, mib, sampleProc, type MallocHeaps, type ProcWindow } from './helpers/proc.js';

const ROUNDS = Number(process.env.BENCH_ARENA_ROUNDS ?? 5);
const SETTLE_MS = 15_000;
const WINDOW_MS = 15_000;
const SHARDS = [617, 617];

/** jemalloc, when the machine has it (Debian's libjemalloc2): another allocator, for comparison. */
const JEMALLOC = ['/usr/lib/x86_64-linux-gnu/libjemalloc.so.2', '/usr/lib/aarch64-linux-gnu/libjemalloc.so.2'].find((path) => existsSync(path));

const SETTINGS: ReadonlyArray<{ label: string; env: Record<string, string> }> = [
  { label: 'glibc default', env: {} },
  { label: 'MALLOC_ARENA_MAX=2', env: { MALLOC_ARENA_MAX: '2' } },
  { label: 'MALLOC_ARENA_MAX=1', env: { MALLOC_ARENA_MAX: '1' } },
  // A fixed threshold turns off glibc's dynamic one, which rises after a large block is freed
  // and then keeps blocks of that size inside the arenas instead of their own mappings.
  { label: 'MALLOC_MMAP_THRESHOLD_=131072', env: { MALLOC_MMAP_THRESHOLD_: '131072' } },
  ...(JEMALLOC ? [{ label: 'LD_PRELOAD=libjemalloc.so.2', env: { LD_PRELOAD: JEMALLOC } }] : []),
];

interface Run {
  window: ProcWindow;
  heaps: MallocHeaps;
  /** RssAnon of /proc/<pid>/status at the end: the process's own memory, without the pages of files (the node binary). */
  anon: number;
}

const rssAnon = (pid: number) => Number(/^RssAnon:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? Number.NaN) * 1024;

/** One daemon of row (a), idle: its RSS over the window and its malloc heaps at the end. */
async function idleDaemon(env: Record<string, string>): Promise<{ ready: Promise<void>; measure(): Promise<Run>; stop(): Promise<void> }> {
  const emulator = await startEmulator();
  const owner = emulator.admin.createUser({ username: 'bench-owner' });
  const token = emulator.admin.createProject({ platform: 'discord', type: 'bot', owner_user_id: owner.id, name: 'Bench Bot' }).project_token;
  const daemon = spawnDaemon({ v1: emulator.urls.v1, v0: emulator.urls.v0, token, stats: { source: 'push' }, votes: true, webhooks: true, health: true, env });
  const ready = (async () => {
    const listening = await daemon.waitFor('push endpoint listening');
    await pushCounts(listening.url as string, SHARDS);
    await until(() => (emulator.admin.requests().some((r) => r.method === 'POST' && r.path.endsWith('/metrics/batch') && r.status < 300) ? true : undefined), 20_000, 'first post', 20);
  })();
  return {
    ready,
    async measure() {
      const sampler = sampleProc(daemon.child.pid!);
      await sleep(WINDOW_MS);
      const window = sampler.stop();
      return { window, heaps: mallocHeaps(daemon.child.pid!), anon: rssAnon(daemon.child.pid!) };
    },
    async stop() {
      await daemon.stop();
      await emulator.close();
    },
  };
}

const median = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)] ?? Number.NaN;

async function run(): Promise<string> {
  assertBuilt();
  const header = await machine();
  const runs = new Map<string, Run[]>(SETTINGS.map((s) => [s.label, []]));
  for (let round = 0; round < ROUNDS; round++) {
    const daemons = await Promise.all(SETTINGS.map((setting) => idleDaemon(setting.env)));
    try {
      await Promise.all(daemons.map((d) => d.ready));
      await sleep(SETTLE_MS);
      const measured = await Promise.all(daemons.map((d) => d.measure()));
      SETTINGS.forEach((setting, i) => runs.get(setting.label)!.push(measured[i]!));
    } finally {
      await Promise.all(daemons.map((d) => d.stop()));
    }
  }
  const rows = SETTINGS.map((setting) => {
    const list = runs.get(setting.label)!;
    const means = list.map((r) => r.window.rssMean);
    const arenaRss = list.map((r) => r.heaps.threadArenas.reduce((sum, a) => sum + a.rss, 0));
    const anon = list.map((r) => r.anon);
    return [
      setting.label,
      means.map((m) => (m / 2 ** 20).toFixed(1)).join(' / '),
      `${mib(median(means))} (${mib(Math.min(...means))} – ${mib(Math.max(...means))})`,
      anon.map((m) => (m / 2 ** 20).toFixed(1)).join(' / '),
      `${mib(median(anon))} (${mib(Math.min(...anon))} – ${mib(Math.max(...anon))})`,
      `${mib(median(list.map((r) => r.window.hwm)))}`,
      list.map((r) => `${r.heaps.threadArenas.length}: ${(r.heaps.threadArenas.reduce((s, a) => s + a.rss, 0) / 2 ** 20).toFixed(1)}`).join(' / '),
      `${mib(median(arenaRss))} (max ${mib(Math.max(...arenaRss))})`,
      list.map((r) => (r.heaps.mainRss / 2 ** 20).toFixed(1)).join(' / '),
      list.map((r) => `${r.window.cpuPercent.toFixed(2)}%`).join(' / '),
    ];
  });
  return [
    '',
    `Malloc arenas of the idle daemon (row (a) of the footprint bench), ${ROUNDS} rounds, the settings side by side in each round; window ${WINDOW_MS / 1000} s from ${SETTLE_MS / 1000} s after the first post. ${header}`,
    '',
    table(
      ['setting', 'idle RSS mean of each round (MiB)', 'median (min – max)', 'RssAnon at the end, each round (MiB)', 'RssAnon median (min – max)', 'VmHWM median', 'thread arenas: count: RSS MiB, each round', 'thread arenas RSS median', 'main arena ([heap]) RSS MiB, each round', 'idle CPU, each round'],
      rows,
      ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
    ),
    '',
  ].join('\n');
}

describe('malloc arenas', () => {
  bench(`idle daemon under ${SETTINGS.length} malloc settings, ${ROUNDS} rounds`, async () => console.log(await run()), { iterations: 1, time: 0, warmupIterations: 0, warmupTime: 0 });
});
