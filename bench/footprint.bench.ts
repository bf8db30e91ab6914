/**
 * Footprint: RSS and CPU of a process idle for 60 s after its first post, each against its own
 * emulator (in this process), all four measured in the same window:
 *   (a)  the daemon, `node --max-semi-space-size=2 dist/cli/main.js run` with
 *        MALLOC_MMAP_THRESHOLD_=131072 (as the Dockerfile and the systemd unit start it), as a sidecar: stats (source `push`), votes
 *        (cursor polled every 60 s, the default) and webhooks (receiver listening) enabled, health
 *        server on (the default); interval 30 m (the default);
 *   (a') the daemon with stats only (source `push`, health off): the autoposter's job, for information;
 *   (c)  topgg-autoposter 2.0.2 with the same 30 m interval (bench/helpers/autoposter.mjs: its
 *        BasePoster over a stand-in client, the sdk's requests sent to the emulator);
 *   (0)  `node -e "setInterval(() => {}, 2 ** 30)"`: the Node runtime doing nothing, the floor;
 *   (L)  Node with the daemon's libraries imported (zod, pino, prom-client, croner, dotenv, undici)
 *        and one idle HTTP server, after two full collections, none of the agent's code: a lower
 *        bound for any daemon on the chosen stack, to set the target against.
 * Stats source `push` rather than `discord-rest`: the autoposter is handed its counts in memory,
 * and `push` is the sidecar source that is handed them too (the bench pushes one report after the
 * endpoint listens; it stays fresh for the default 10 min) instead of fetching from Discord.
 *
 * RSS is VmRSS of /proc/<pid>/status sampled every second inside the window; VmHWM is the peak of
 * the process's whole life (start-up included); CPU is utime + stime of /proc/<pid>/stat over the
 * window (10 ms resolution: 0.1% of a core over 60 s is 6 ticks). Requests are those each
 * emulator logged inside the window.
 *
 * Run:  npm run bench:footprint   (= npm run build && vitest bench --run bench/footprint.bench.ts), about 75 s.
 * `BENCH_IDLE_SECONDS` (default 60) shortens the window for a trial run. The window opens
 * `BENCH_SETTLE_SECONDS` (default 15) after the first post, for every process alike: the tail of
 * start-up (JIT compilation of code run for the first time, the first collections) belongs to
 * start-up, not to idling; with 3 s it put 70-90 ms of that tail into the daemon's idle CPU.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { bench, describe } from 'vitest';
import { startEmulator, type RunningEmulator } from '../src/emulator/index.js';
import { assertBuilt, machine, PACKAGED, pushCounts, sleep, spawnAutoposter, spawnDaemon, table, until } from './helpers/daemon.js';
import { mib, MiB, sampleProc, type ProcWindow } from './helpers/proc.js';

const IDLE_SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 60);
const SETTLE_MS = Number(process.env.BENCH_SETTLE_SECONDS ?? 15) * 1000;
const SHARDS = [617, 617];
const RSS_TARGET = 60 * 1000 * 1000; // 60 MB
const CPU_TARGET_PERCENT = 0.1;
/** Issue 20, target 4: the daemon within 8 MiB of its libraries alone (row L). */
const GAP_TARGET = 8 * MiB;

interface Target {
  label: string;
  pid: number;
  emulator: RunningEmulator;
  stop(): Promise<unknown>;
}

async function project(emu: RunningEmulator): Promise<string> {
  const owner = emu.admin.createUser({ username: 'bench-owner' });
  return emu.admin.createProject({ platform: 'discord', type: 'bot', owner_user_id: owner.id, name: 'Bench Bot' }).project_token;
}

const posted = (emu: RunningEmulator, path: RegExp) => () =>
  emu.admin.requests().some((r) => r.method === 'POST' && path.test(r.path) && r.status < 300) ? true : undefined;

async function daemonTarget(label: string, full: boolean): Promise<Target> {
  const emulator = await startEmulator();
  const token = await project(emulator);
  // Started as the container and the systemd unit start it (PACKAGED: the node flag, the malloc variable).
  const daemon = spawnDaemon({ v1: emulator.urls.v1, v0: emulator.urls.v0, token, stats: { source: 'push' }, votes: full, webhooks: full, health: full, nodeArgs: [...PACKAGED.nodeArgs], env: { ...PACKAGED.env } });
  const listening = await daemon.waitFor('push endpoint listening');
  const pushed = await pushCounts(listening.url as string, SHARDS);
  if (pushed.status !== 204) throw new Error(`push answered ${pushed.status}`);
  await until(posted(emulator, /\/metrics\/batch$/), 20_000, `${label}: first post`, 20);
  return { label, pid: daemon.child.pid!, emulator, stop: () => daemon.stop() };
}

async function autoposterTarget(label: string): Promise<Target> {
  const emulator = await startEmulator();
  const token = await project(emulator);
  const poster = spawnAutoposter({ origin: emulator.urls.origin, token, serverCount: SHARDS[0]! + SHARDS[1]!, shardCount: SHARDS.length });
  await until(posted(emulator, /^\/api\/bots\/stats$/), 20_000, `${label}: first post`, 20);
  return { label, pid: poster.child.pid!, emulator, stop: () => poster.stop() };
}

/** A bare `node` child running `args` (from the repository, so that imports resolve), with an emulator of its own for symmetry. */
async function idleNode(label: string, args: string[], readyAfterMs: number): Promise<Target> {
  const emulator = await startEmulator();
  const child = spawn(process.execPath, args, { cwd: fileURLToPath(new URL('..', import.meta.url)), stdio: 'ignore' });
  await sleep(readyAfterMs);
  if (child.exitCode !== null) throw new Error(`${label}: exited with ${child.exitCode}`);
  return {
    label,
    pid: child.pid!,
    emulator,
    stop: async () => {
      child.kill();
      await new Promise((resolve) => child.on('exit', resolve));
    },
  };
}

const nodeFloor = (label: string) => idleNode(label, ['-e', 'setInterval(() => {}, 2 ** 30)'], 500);

/** The daemon's runtime dependencies (package.json), imported and left idle beside one HTTP server. */
const LIBRARIES = ['zod', 'pino', 'prom-client', 'croner', 'dotenv', 'undici'];

function libraryFloor(label: string): Promise<Target> {
  const source = [
    ...LIBRARIES.map((name) => `await import('${name}');`),
    "(await import('node:http')).createServer().listen(0, '127.0.0.1');",
    // Two full collections: the heap as small as these libraries allow, so (L) is a lower bound.
    'globalThis.gc(); globalThis.gc();',
    'setInterval(() => {}, 2 ** 30);',
  ].join(' ');
  return idleNode(label, ['--expose-gc', '--input-type=module', '-e', source], 1_000);
}

async function run(): Promise<string> {
  assertBuilt();
  const header = await machine();
  const targets = await Promise.all([
    daemonTarget('(a) listing-agent daemon: stats (push) + votes + webhooks + health', true),
    daemonTarget("(a') listing-agent daemon: stats (push) only, health off (information)", false),
    autoposterTarget('(c) topgg-autoposter 2.0.2 (stats only)'),
    nodeFloor('(0) node, an empty interval (the floor)'),
    libraryFloor(`(L) node + the daemon's libraries (${LIBRARIES.join(', ')}), imported, collected, idle`),
  ]);
  try {
    await sleep(SETTLE_MS);
    const marks = targets.map((t) => t.emulator.admin.requests().length);
    const samplers = targets.map((t) => sampleProc(t.pid));
    await sleep(IDLE_SECONDS * 1000);
    const windows: ProcWindow[] = samplers.map((s) => s.stop());
    const requests = targets.map((t, i) => {
      const sent = t.emulator.admin.requests().slice(marks[i]);
      const byRoute = new Map<string, number>();
      for (const r of sent) byRoute.set(`${r.method} ${r.path}`, (byRoute.get(`${r.method} ${r.path}`) ?? 0) + 1);
      return sent.length === 0 ? '0' : `${sent.length} (${[...byRoute].map(([route, n]) => `${n}× ${route}`).join(', ')})`;
    });
    const rows = targets.map((t, i) => {
      const w = windows[i]!;
      return [t.label, mib(w.rssEnd), mib(w.rssMean), mib(w.rssPeak), mib(w.hwm), `${w.cpuPercent.toFixed(3)}%`, `${(w.cpuSeconds * 1000).toFixed(0)} ms`, requests[i]!];
    });
    const a = windows[0]!;
    const verdicts = [
      ['idle RSS of (a), mean in the window', `${mib(a.rssMean)} (${(a.rssMean / 1e6).toFixed(1)} MB)`, '< 60 MB', a.rssMean < RSS_TARGET ? 'met' : '**not met**'],
      ['idle RSS of (L), the libraries alone (information: the floor under (a))', `${mib(windows[4]!.rssMean)} (${(windows[4]!.rssMean / 1e6).toFixed(1)} MB)`, '< 60 MB', windows[4]!.rssMean < RSS_TARGET ? 'under' : '**over**'],
      ['idle RSS of (a) − (L), means in the window (issue 20, target 4)', `+${mib(a.rssMean - windows[4]!.rssMean)}`, `<= ${mib(GAP_TARGET)}`, a.rssMean - windows[4]!.rssMean <= GAP_TARGET ? 'met' : '**not met**'],
      ['idle CPU of (a)', `${a.cpuPercent.toFixed(3)}% of a core`, `< ${CPU_TARGET_PERCENT}%`, a.cpuPercent < CPU_TARGET_PERCENT ? 'met' : '**not met**'],
    ];
    return [
      '',
      `Footprint, idle for ${IDLE_SECONDS} s, from ${SETTLE_MS / 1000} s after the first post (${(windows[0]!.seconds).toFixed(1)} s measured), 1 s RSS samples. ${header}`,
      '',
      table(
        ['process', 'RSS at the end', 'RSS mean', 'RSS peak in the window', 'VmHWM (whole life)', 'CPU, % of a core', 'CPU time', 'requests to the service in the window'],
        rows,
        ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'l'],
      ),
      '',
      table(['measure', 'value', 'target', ''], verdicts),
      '',
      `(1 MiB = ${MiB.toLocaleString('en-US')} bytes; the target's 60 MB = 57.2 MiB.)`,
      '',
    ].join('\n');
  } finally {
    await Promise.all(targets.map(async (t) => {
      await t.stop();
      await t.emulator.close();
    }));
  }
}

describe('footprint', () => {
  bench(
    `idle ${IDLE_SECONDS} s: daemon (stats+votes+webhooks) vs topgg-autoposter`,
    async () => {
      console.log(await run());
    },
    { iterations: 1, time: 0, warmupIterations: 0, warmupTime: 0 },
  );
});
