/**
 * Vote -> reward latency (issue 33: p99 < 10 ms at 1,000 votes/s, on the median of the runs):
 * signed `vote.create` deliveries sent at a fixed rate in an OPEN loop (each request leaves at its
 * slot on the clock whether or not earlier ones were answered, so a server falling behind shows as
 * queueing) to the durable receiver as a bot owner runs it: the agent with `webhooks.enabled`, the
 * default file vote ledger (every vote durably pending before its 2xx) and one `agent.on('vote')`
 * listener that notes the monotonic clock when it is called.
 *
 * Per vote: first byte of the request -> the listener's call ("reward"), and first byte -> the 2xx
 * ("ack"); p50, p99 and p99.9 of each; sent, acknowledged and rewarded counts; lost votes
 * (acknowledged, never rewarded) and duplicates (rewarded twice), both of which must be 0. Each
 * run is a fresh server process with an empty ledger; the verdict takes the median of the runs'
 * p99s.
 *
 * Run:  npm run bench:latency    (= npm run build && vitest bench --run bench/latency.bench.ts)
 *
 * About 75 s: `BENCH_ROUNDS` (default 5) runs of 1 s warm-up and 10 s measured at 1,000 votes/s.
 * `BENCH_LATENCY_SECONDS=<s>` sets every measured run's length; `BENCH_LATENCY_RATES=100,1000,10000`
 * measures other rates too (information: only 1,000/s has a target). The server is
 * bench/helpers/webhook-target.mjs `receiver` in a process of its own, loaded from the built dist/,
 * against the emulator in this process; the sender is bench/helpers/open-loop.ts in this process
 * (raw keep-alive sockets, one request in flight per connection, more connections opened when all
 * are busy). On Linux with `taskset` the sender is pinned to core 0 and the server's event-loop
 * thread to core 1 (see webhook-load.ts `pinning`). Each run: a warm-up at the rate (its votes are
 * not counted), then the measured run; the times come from `process.hrtime.bigint()` in both
 * processes (one monotonic clock per machine).
 */
import { loadavg } from 'node:os';
import { bench, describe } from 'vitest';
import { fsyncCadence, type FsyncCadenceResult } from './helpers/fsync-cadence.js';
import { assertBuilt } from './helpers/daemon.js';
import { startBenchService, type BenchService } from './helpers/service.js';
import { median, verdict } from './helpers/stats.js';
import { openLoop, type OpenLoopRequest, type OpenLoopResult } from './helpers/open-loop.js';
import {
  BODY_BYTES,
  loadAverage,
  machineNote,
  pinGenerator,
  pinning,
  startTarget,
  TARGET_PATH,
  TARGET_V1_SECRET,
  targetEnv,
  voteCreateDeliveries,
  type Delivery,
  type TargetStats,
} from './helpers/webhook-load.js';

/** The receiver's `user.id` of delivery n is this plus n (webhook-load.ts `voteCreateDeliveries`). */
const USER_ID_BASE = 500_000_000_000_000_000n;

interface Rate {
  perSecond: number;
  /** Seconds measured (after `warmupSeconds`). */
  seconds: number;
  warmupSeconds: number;
  /** Target for the reward latency's p99, ms (undefined: information). */
  p99TargetMs?: number;
}

/**
 * The servers measured in each run, alternating: the agent as a bot owner runs it (the headline),
 * the minimal durable server of bench:webhooks on the same disk (the floor of any durable design:
 * it has no listener, so its figure is first byte -> 204), and, as a diagnosis only, the agent with
 * its state directory on tmpfs, where fdatasync costs nothing (`BENCH_LATENCY_SERVERS` picks).
 */
interface Server {
  name: 'agent' | 'minimal' | 'agent-tmpfs';
  label: string;
  target: 'receiver' | 'minimal';
  /** Where the state directory is made (default the OS temp directory, on the disk). */
  stateParent?: string;
}
const SERVERS: readonly Server[] = (
  [
    { name: 'agent', label: '**agent** (disk)', target: 'receiver' },
    { name: 'minimal', label: 'minimal durable server (disk; → 204)', target: 'minimal' },
    { name: 'agent-tmpfs', label: 'agent, state on tmpfs (diagnosis)', target: 'receiver', stateParent: '/dev/shm' },
  ] satisfies Server[]
).filter((server) => (process.env.BENCH_LATENCY_SERVERS ?? 'agent,minimal,agent-tmpfs').split(',').includes(server.name));
/** The fdatasync probe's line: about one vote's journal line. */
const FSYNC_LINE_BYTES = 400;

const SECONDS = process.env.BENCH_LATENCY_SECONDS === undefined ? undefined : Number(process.env.BENCH_LATENCY_SECONDS);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const RATES: readonly Rate[] = [
  { perSecond: 100, seconds: SECONDS ?? 20, warmupSeconds: 2 },
  { perSecond: 1_000, seconds: SECONDS ?? 10, warmupSeconds: 1, p99TargetMs: 10 },
  { perSecond: 10_000, seconds: SECONDS ?? 5, warmupSeconds: 1 },
].filter((rate) => (process.env.BENCH_LATENCY_RATES ?? '1000').split(',').map(Number).includes(rate.perSecond));

/**
 * The receiver's default connection cap (`webhooks.maxConnections`, 256): more would be refused.
 * A request due while all are busy waits in the sender for the first one free, which is queueing
 * the server caused: the "from slot" figures count it, the "from first byte" ones do not.
 */
const MAX_CONNECTIONS = 256;
/** After the last send: how long answers and hook calls may take before the rest counts as lost. */
const DRAIN_MS = 10_000;

interface Percentiles {
  p50: number;
  p99: number;
  p999: number;
  max: number;
}

interface RateResult {
  rate: Rate;
  server: Server;
  /** The 1-minute load average when the run started. */
  load: number;
  stats: TargetStats;
  sent: number;
  acked: number;
  non2xx: number;
  errors: number;
  hooked: number;
  lost: number;
  duplicates: number;
  /** Hook calls for votes this run never sent (must be 0). */
  strangers: number;
  reward: Percentiles;
  ack: Percentiles;
  /** From the request's slot on the schedule to the hook: `reward` plus any wait for a free connection. */
  rewardFromSlot: Percentiles;
  /** How late the sender put requests on the wire against their slots. */
  senderLate: Percentiles;
  achievedRate: number;
  connections: number;
  senderCpuPercent: number;
  serverCpuPercent: number;
}

/** p50/p99/p99.9/max of `values` (ms); NaN when empty. */
function percentiles(values: number[]): Percentiles {
  values.sort((x, y) => x - y);
  const at = (p: number) => values[Math.min(values.length - 1, Math.max(0, Math.ceil(p * values.length) - 1))] ?? Number.NaN;
  return { p50: at(0.5), p99: at(0.99), p999: at(0.999), max: values[values.length - 1] ?? Number.NaN };
}

/** The raw bytes of `delivery` as a request to `host:port` + TARGET_PATH. */
function requestBytes(delivery: Delivery, authority: string): OpenLoopRequest {
  const headers = Object.entries({ ...delivery.headers, 'content-length': String(delivery.body.length) })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  return { bytes: Buffer.concat([Buffer.from(`POST ${TARGET_PATH} HTTP/1.1\r\nhost: ${authority}\r\n${headers}\r\n`, 'latin1'), delivery.body]) };
}

/**
 * Per vote of the measured run (`count` deliveries after `warm` warm-up ones): the counts and the
 * latencies, from the sender's result and the hook's `[userId, hrtime]` pairs.
 */
function tally(result: OpenLoopResult, hookTimes: readonly string[] | undefined, warm: number, count: number) {
  // Hook calls by delivery index (the user ID is the base plus the index).
  const hookNs = new Map<number, bigint[]>();
  let strangers = 0;
  for (let i = 0; hookTimes !== undefined && i < hookTimes.length; i += 2) {
    const index = Number(BigInt(hookTimes[i] as string) - USER_ID_BASE) - warm;
    if (index < 0 || index >= count) {
      strangers += 1;
      continue;
    }
    const times = hookNs.get(index) ?? [];
    times.push(BigInt(hookTimes[i + 1] as string));
    hookNs.set(index, times);
  }
  const reward: number[] = [];
  const rewardFromSlot: number[] = [];
  const ack: number[] = [];
  let acked = 0;
  let non2xx = 0;
  let lost = 0;
  let duplicates = 0;
  for (let index = 0; index < count; index++) {
    const status = result.status[index] as number;
    const ok = status >= 200 && status < 300;
    if (ok) {
      acked += 1;
      ack.push(Number((result.answeredNs[index] as bigint) - (result.sentNs[index] as bigint)) / 1e6);
    } else if (status !== 0) non2xx += 1;
    // A server without a listener (the minimal one): its "reward" is the 2xx.
    const times = hookTimes === undefined && ok ? [result.answeredNs[index] as bigint] : hookNs.get(index);
    if (times === undefined) {
      if (ok) lost += 1;
      continue;
    }
    if (times.length > 1) duplicates += times.length - 1;
    const firstByteToHook = Number((times[0] as bigint) - (result.sentNs[index] as bigint)) / 1e6;
    reward.push(firstByteToHook);
    rewardFromSlot.push(firstByteToHook + Number(result.lateNs[index] as bigint) / 1e6);
  }
  return {
    sent: count - [...result.sentNs].filter((ns) => ns === 0n).length,
    acked,
    non2xx,
    hooked: [...hookNs.values()].reduce((sum, times) => sum + times.length, 0),
    lost,
    duplicates,
    strangers,
    reward: percentiles(reward),
    ack: percentiles(ack),
    rewardFromSlot: percentiles(rewardFromSlot),
  };
}

async function measure(rate: Rate, server: Server, service: BenchService): Promise<RateResult> {
  const load = loadavg()[0] as number;
  const warm = Math.round(rate.perSecond * rate.warmupSeconds);
  const count = Math.round(rate.perSecond * rate.seconds);
  // Signed now, one pool per run: every delivery's time stays inside the receiver's tolerance.
  // The bench bot's own project: the receiver refuses a vote for another one (issue 34).
  const own = { projectId: service.projectId, botId: service.platformId };
  const pool = voteCreateDeliveries({ count: warm + count, secret: TARGET_V1_SECRET, ...own, nowMs: Date.now() });
  const target = await startTarget(server.target, {
    ...targetEnv(service),
    BENCH_RECORD_HOOK_TIMES: '1',
    ...(server.stateParent === undefined ? {} : { BENCH_STATE_PARENT: server.stateParent }),
  });
  const hooks = server.target === 'receiver';
  try {
    const { hostname, port } = new URL(target.url);
    const authority = `${hostname}:${port}`;
    // Enough connections for 20 ms of requests at once, opened before the clock starts.
    const preopen = Math.max(16, Math.ceil(rate.perSecond / 50));
    const common = {
      host: hostname,
      port: Number(port),
      rate: rate.perSecond,
      preopen,
      maxConnections: MAX_CONNECTIONS,
      drainMs: DRAIN_MS,
    };
    await openLoop({ ...common, requests: pool.slice(0, warm).map((d) => requestBytes(d, authority)) });
    if (hooks) await target.ask({ drain: DRAIN_MS, expect: warm }, 'drained', DRAIN_MS + 5_000);
    await target.reset();

    const measured = pool.slice(warm, warm + count);
    const result = await openLoop({ ...common, requests: measured.map((d) => requestBytes(d, authority)) });
    const acked = [...result.status].filter((status) => status >= 200 && status < 300).length;
    const drained = hooks
      ? ((await target.ask({ drain: DRAIN_MS, expect: acked }, 'drained', DRAIN_MS + 5_000)) as { hookTimes: string[] })
      : undefined;
    const stats = await target.stop();
    return {
      rate,
      server,
      load,
      stats,
      ...tally(result, drained?.hookTimes, warm, count),
      errors: result.errors,
      senderLate: percentiles([...result.lateNs].map((ns) => Number(ns) / 1e6)),
      achievedRate: count / result.sendSeconds,
      connections: result.connections,
      senderCpuPercent: result.senderCpuPercent,
      serverCpuPercent: (stats.cpuMs / stats.wallMs) * 100,
    };
  } catch (error) {
    target.kill();
    throw error;
  }
}

const count = (value: number) => Math.round(value).toLocaleString('en-US');
const ms = (value: number) => (Number.isFinite(value) ? `${value.toFixed(value < 10 ? 2 : 1)} ms` : '–');
const trio = (p: Percentiles) => `${ms(p.p50)} / ${ms(p.p99)} / ${ms(p.p999)}`;
const clean = (r: RateResult) =>
  r.lost === 0 && r.duplicates === 0 && r.strangers === 0 && r.non2xx === 0 && r.errors === 0 && r.sent === r.acked;
/**
 * The run's p99 the target is held on: the worse of first byte → reward and slot → reward (a wait
 * for a free connection is queueing the server caused).
 */
const heldP99 = (r: RateResult) => Math.max(r.reward.p99, r.rewardFromSlot.p99);

function runRow(r: RateResult, round: number): string {
  const cells = [
    r.server.label,
    count(r.rate.perSecond),
    String(round + 1),
    r.load.toFixed(1),
    `${count(r.sent)} (${count(r.achievedRate)}/s)`,
    count(r.acked),
    r.server.target === 'receiver' ? count(r.hooked) : '–',
    `${r.lost} / ${r.duplicates} / ${r.non2xx} / ${r.errors}`,
    `${trio(r.reward)} (${ms(r.reward.max)})`,
    `${trio(r.ack)} (${ms(r.ack.max)})`,
    trio(r.rewardFromSlot),
    ms(r.senderLate.p99),
    `${ms(r.stats.loopDelayP99Ms)} / ${ms(r.stats.loopDelayMaxMs)}`,
    `${r.stats.gc.count}, ${ms(r.stats.gc.totalMs)}, ${ms(r.stats.gc.maxMs)}`,
    r.stats.commits > 0 ? count(r.stats.commits) : '',
    `${Math.round(r.serverCpuPercent)}%`,
  ];
  return `| ${cells.join(' | ')} |`;
}

function fsyncRow(f: FsyncCadenceResult & { load: number }, round: number): string {
  const p = percentiles([...f.datasyncMs]);
  const cells = ['fdatasync alone (disk)', '1,000', String(round + 1), f.load.toFixed(1), `${count(f.lines)} lines`, '', '', ''];
  cells.push(`fdatasync p50 / p99 / p99.9 (max): ${trio(p)} (${ms(p.max)})`, '', '', '', '', '', count(f.datasyncMs.length), '');
  return `| ${cells.join(' | ')} |`;
}

type Results = ReadonlyMap<string, RateResult[]>;
const resultKey = (server: Server, rate: Rate) => `${server.name}@${rate.perSecond}`;

function verdictRows(results: Results, fsyncs: readonly FsyncCadenceResult[]): string[] {
  const verdicts = ['| target | measured: median of the runs (each run) | |', '| --- | ---: | --- |'];
  for (const rate of RATES) {
    for (const server of SERVERS) {
      const runs = results.get(resultKey(server, rate)) ?? [];
      if (runs.length === 0) continue;
      const p99s = runs.map(heldP99);
      const value = median(p99s);
      const figure = server.target === 'receiver' ? 'vote → reward p99' : 'first byte → 204 p99';
      const what = `${server.label}: ${figure} at ${count(rate.perSecond)} votes/s`;
      const each = p99s.map(ms).join(' / ');
      const target = rate.p99TargetMs;
      if (target !== undefined && server.name === 'agent') {
        const held = `${what} < ${target} ms (the worse of first byte and slot → reward)`;
        verdicts.push(`| ${held} | **${ms(value)}** (${each}) | ${verdict(value < target)} |`);
      } else verdicts.push(`| ${what} (information) | ${ms(value)} (${each}) | |`);
      const dirty = runs.filter((r) => !clean(r)).length;
      const runsClean = dirty === 0 ? 'every run' : `${dirty} of ${runs.length} runs not`;
      const whole = `${server.label}: no vote lost, none rewarded twice, every request 2xx, at ${count(rate.perSecond)} votes/s`;
      verdicts.push(`| ${whole} | ${runsClean} | ${verdict(dirty === 0)} |`);
    }
  }
  if (fsyncs.length > 0) {
    const p99s = fsyncs.map((f) => percentiles([...f.datasyncMs]).p99);
    const what = 'fdatasync alone on the disk at 1,000 lines/s: p99 (information)';
    verdicts.push(`| ${what} | ${ms(median(p99s))} (${p99s.map(ms).join(' / ')}) | |`);
  }
  return verdicts;
}

type FsyncRun = FsyncCadenceResult & { load: number };

function report(results: Results, fsyncs: readonly FsyncRun[], loadBefore: string, loadAfter: string): string {
  const rows = [
    '| server | rate (votes/s) | run | load (1 min) | sent (achieved rate) | acked (2xx) | rewarded | lost / dup / non-2xx / errors ' +
      '| first byte → reward (minimal: → 204): p50 / p99 / p99.9 (max) | first byte → 2xx: p50 / p99 / p99.9 (max) ' +
      '| slot → reward: p50 / p99 / p99.9 | sender late p99 | event-loop delay p99 / max | GC: count, total, longest ' +
      '| commits | server CPU |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (let round = 0; round < ROUNDS; round++) {
    for (const rate of RATES) {
      for (const server of SERVERS) {
        const r = results.get(resultKey(server, rate))?.[round];
        if (r) rows.push(runRow(r, round));
      }
    }
    const f = fsyncs[round];
    if (f) rows.push(fsyncRow(f, round));
  }
  const pinned = pinning
    ? `sender pinned to core ${pinning.generatorCpu}, the server's event loop to core ${pinning.serverCpu}`
    : 'not pinned';
  const notes = [
    machineNote(loadBefore, loadAfter),
    [
      'Open loop: each request leaves at its slot (i / rate s after the start; the sender wakes about every millisecond and sends every',
      `request due), ${BODY_BYTES}-byte signed v1 \`vote.create\` bodies, every vote distinct, keep-alive connections with one request in`,
      `flight each (${pinned}). "sender late" is how far behind its slot a request's first byte went out: the sender's own hiccups, and`,
      `waits for a free connection when all ${MAX_CONNECTIONS} (the receiver's default cap) are busy, which is queueing the server caused;`,
      '"slot → reward" counts it, and the verdict takes the worse of the two p99s. Agent: webhooks on, the default file ledger',
      '(fdatasync per group commit), one vote listener, logging as the daemon does by default. Minimal: bench:webhooks\'s minimal durable',
      'server (node:http, HMAC, a Map of keys, a line per vote, 204 after a group-commit fdatasync), no listener: its figure is first',
      'byte → 204. Each a fresh process per run, warmed up at the rate first, state in the OS temp directory (the disk) unless tmpfs.',
      `Lost: acknowledged 2xx but no listener call within ${DRAIN_MS / 1000} s of the last send. fdatasync alone: in the bench process,`,
      `a ${FSYNC_LINE_BYTES}-byte line due every ms, the lines due while no commit is in flight written and fdatasynced together, in`,
      'the same temp directory; per commit, the fdatasync call to its completion. Event-loop delay (monitorEventLoopDelay) and GC',
      "pauses (PerformanceObserver 'gc') are the server's over the measured run.",
    ].join(' '),
  ];
  const tables = [rows.join('\n'), verdictRows(results, fsyncs).join('\n'), ...notes].join('\n\n');
  return `\nVote -> reward latency (open loop, ${ROUNDS} runs per server and rate):\n\n${tables}\n`;
}

async function run(): Promise<void> {
  assertBuilt();
  const loadBefore = loadAverage();
  const service = await startBenchService();
  const results = new Map<string, RateResult[]>();
  const fsyncs: FsyncRun[] = [];
  const unpin = pinGenerator();
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const rate of RATES) {
        for (const server of round % 2 === 0 ? SERVERS : [...SERVERS].reverse()) {
          const key = resultKey(server, rate);
          results.set(key, [...(results.get(key) ?? []), await measure(rate, server, service)]);
        }
      }
      if (process.env.BENCH_LATENCY_FSYNC !== '0') {
        const load = loadavg()[0] as number;
        fsyncs.push({ load, ...(await fsyncCadence({ seconds: SECONDS ?? 10, intervalMs: 1, lineBytes: FSYNC_LINE_BYTES })) });
      }
    }
  } finally {
    unpin();
    await service.close();
  }
  console.log(report(results, fsyncs, loadBefore, loadAverage()));
  const broken = [...results.values()].flat().filter((r) => r.lost > 0 || r.duplicates > 0 || r.strangers > 0);
  if (broken.length > 0) {
    const where = broken.map((r) => `${r.server.name} at ${r.rate.perSecond}/s`).join(', ');
    throw new Error(`latency bench: votes lost or rewarded twice (${where})`);
  }
}

describe('vote -> reward latency', () => {
  const rates = RATES.map((rate) => count(rate.perSecond)).join(', ');
  const once = { iterations: 1, time: 0, warmupIterations: 0, warmupTime: 0 };
  bench(`open loop at ${rates} votes/s, ${SERVERS.length} servers, ${ROUNDS} runs each`, run, once);
});
