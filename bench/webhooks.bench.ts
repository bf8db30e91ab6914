/**
 * The durable webhook receiver against what it is held to (issue 33), in one run: requests per
 * second and CPU per delivery of 1 KiB signed `vote.create` deliveries on 127.0.0.1 for
 *   (r) the durable receiver as a bot owner runs it: the agent (`createListingAgent`, the built
 *       package) with `webhooks.enabled`, the default file vote ledger (every vote durably pending,
 *       written and fsynced by group commit, before its 2xx), one `agent.on('vote')` listener,
 *       logging as the daemon does by default;
 *   (m) the minimal durable server (bench/helpers/minimal-durable-server.mjs: node:http, the HMAC
 *       check, a `Map` of vote keys, one appended line per vote, 204 after a group commit's
 *       fdatasync);
 *   (s) `@top-gg/sdk`'s `Webhook.listener` on Express (legacy scheme: v0 `upvote` bodies of the
 *       same size with `Authorization: <secret>`), which records nothing.
 * Targets, each on the median of the rounds' ratios: (r)'s CPU per delivery at most 1/0.6 of
 * (m)'s, and (r)'s requests/s at least (s)'s.
 *
 * Run:  npm run bench:webhooks      (= npm run build && vitest bench --run bench/webhooks.bench.ts)
 *
 * About 2 minutes. `BENCH_ROUNDS=<n>` (default 5; odd, so the median is a round's) and
 * `BENCH_MEASURE_SECONDS=<s>` (default 5) shorten a trial; `BENCH_WEBHOOK_TARGETS=receiver,minimal`
 * measures only those (names in TARGETS); `BENCH_NO_PIN=1` leaves the processes unpinned;
 * `BENCH_CPU_PROFILE_DIR=<dir>` writes a CPU profile of each measured run (bench/PROFILE.md);
 * `BENCH_BASE_DIST=<other checkout>/dist` adds the receiver loaded from that build ("[base]"),
 * so that two builds alternate in one run on one machine.
 *
 * The load generator is autocannon, in this process; each server runs in a process of its own
 * (bench/helpers/webhook-target.mjs), the emulator (the service the agent asks who it is) in this
 * one. On Linux with `taskset` the generator is pinned to core 0 and the server's event-loop thread
 * to core 1 (see webhook-load.ts `pinning`). Per target and round: a new server process; one good
 * delivery must get a 2xx and one forged delivery a 4xx (each target really verifies); a 1 s
 * warm-up; then the measured run with 32 keep-alive connections; for (r), a wait until its
 * listener has seen every acknowledged vote, so the CPU of the rewards is counted. Rounds
 * alternate the order. Every request is a distinct vote (a different user, so a different vote
 * key) from a pool signed at the start of the round. Any non-2xx, connection error or timeout
 * fails the bench: the comparison is only fair when every target accepted everything.
 *
 * CPU per delivery is the server process's user + system time (every thread: libuv's pool, which
 * runs the writes and fsyncs, and V8's helpers) over the measured phase, divided by the 2xx the
 * generator got: the steadiest figure on a busy machine, and the one the target is held on.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { bench, describe } from 'vitest';
import { startBenchService, type BenchService } from './helpers/service.js';
import { median, verdict } from './helpers/stats.js';
import {
  BODY_BYTES,
  legacyUpvoteDeliveries,
  loadAverage,
  loadRun,
  machineNote,
  pinGenerator,
  pinning,
  sendOnce,
  startTarget,
  TARGET_V0_SECRET,
  TARGET_V1_SECRET,
  targetEnv,
  voteCreateDeliveries,
  type Delivery,
  type LoadResult,
  type TargetStats,
} from './helpers/webhook-load.js';

const CONNECTIONS = 32;
const WARMUP_SECONDS = 1;
const MEASURE_SECONDS = Number(process.env.BENCH_MEASURE_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
/** `BENCH_BASE_DIST`: a second build of the agent, measured beside this one in the same run. */
const BASE_DIST = process.env.BENCH_BASE_DIST;
/** Distinct votes per round and scheme; the targets that remember votes must stay inside it. */
const POOL = { v1: 150_000, v0: 50_000 };
/** Issue 33: (r)'s CPU per delivery at most 1/0.6 of (m)'s; (r)'s requests/s at least (s)'s. */
const CPU_RATIO_TARGET = 1 / 0.6;
const THROUGHPUT_RATIO_TARGET = 1;


/** The bench bot's project as `voteCreateDeliveries` takes it. */
const ownProject = (service: BenchService) => ({ projectId: service.projectId, botId: service.platformId });

interface Target {
  label: string;
  /** The argument of bench/helpers/webhook-target.mjs. */
  name: 'receiver' | 'minimal' | 'topgg-sdk';
  scheme: 'v1' | 'v0';
  /** Loaded from `BENCH_BASE_DIST` instead of this repository's dist/. */
  base?: boolean;
}

const TARGETS: readonly Target[] = [
  { label: '**(r) the durable receiver: the agent, webhooks on, default file ledger, one vote listener**', name: 'receiver', scheme: 'v1' },
  {
    label: '(m) minimal durable server: node:http, HMAC, a Map of keys, a line per vote, 204 after fdatasync',
    name: 'minimal',
    scheme: 'v1',
  },
  { label: '(s) @top-gg/sdk `Webhook.listener` on Express (v0 `Authorization`; records nothing)', name: 'topgg-sdk', scheme: 'v0' },
];

/** Targets that remember votes: their pool must not wrap (a repeat is a duplicate, cheaper than a vote). */
const REMEMBERS_VOTES: ReadonlySet<Target['name']> = new Set(['receiver', 'minimal']);

interface Run {
  load: LoadResult;
  stats: TargetStats;
  /** Status of one good and one forged delivery before the load. */
  good: number;
  forged: number;
  /** More requests than distinct votes in the pool: some were repeats. */
  wrapped: boolean;
}

const root = fileURLToPath(new URL('..', import.meta.url));
const require = createRequire(import.meta.url);
const versionOf = (name: string) => (require(`${name}/package.json`) as { version: string }).version;

/** Every src/**\/*.ts must have a dist/**\/*.js at least as new (the receiver loads dist/). */
function assertFreshBuild(): void {
  const stale: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(join(root, 'src', dir), { withFileTypes: true })) {
      const rel = join(dir, entry.name);
      if (entry.isDirectory()) walk(rel);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) {
        let builtAt = 0;
        try {
          builtAt = statSync(join(root, 'dist', rel.replace(/\.ts$/, '.js'))).mtimeMs;
        } catch {
          // missing: stale
        }
        if (builtAt < statSync(join(root, 'src', rel)).mtimeMs) stale.push(rel);
      }
    }
  };
  walk('');
  if (stale.length > 0) {
    const named = `${stale.slice(0, 5).join(', ')}${stale.length > 5 ? ', ...' : ''}`;
    throw new Error(`dist/ is older than src/ (${named}): run \`npm run build\` first, or \`npm run bench:webhooks\``);
  }
}

/** A copy of `delivery` that must be refused: the signature (v1) or the secret (v0) is wrong. */
function forged(delivery: Delivery, scheme: Target['scheme']): Delivery {
  const headers = { ...delivery.headers };
  if (scheme === 'v0') headers.authorization = `${TARGET_V0_SECRET}x`;
  else {
    const flip = (_m: string, c: string) => `v1=${c === '0' ? '1' : '0'}`;
    headers['x-topgg-signature'] = (headers['x-topgg-signature'] as string).replace(/v1=([0-9a-f])/, flip);
  }
  return { body: delivery.body, headers };
}

async function measure(target: Target, pool: readonly Delivery[], service: BenchService): Promise<Run> {
  const env = targetEnv(service, target.base ? BASE_DIST : undefined);
  const server = await startTarget(target.name, env);
  try {
    const cursor = { next: 0 };
    const good = await sendOnce(server.url, pool[cursor.next++]!);
    const bad = await sendOnce(server.url, forged(pool[cursor.next++]!, target.scheme));
    await loadRun({ url: server.url, pool, cursor, connections: CONNECTIONS, seconds: WARMUP_SECONDS });
    await server.reset();
    const load = await loadRun({ url: server.url, pool, cursor, connections: CONNECTIONS, seconds: MEASURE_SECONDS });
    // The rewards run after the 2xx: their CPU belongs to the deliveries measured.
    if (target.name === 'receiver') await server.ask({ drain: 10_000, expect: load.ok2xx }, 'drained', 15_000);
    const stats = await server.stop();
    return { load, stats, good, forged: bad, wrapped: cursor.next > pool.length };
  } catch (error) {
    server.kill();
    throw error;
  }
}

const count = (value: number) => Math.round(value).toLocaleString('en-US');
const ms = (value: number) => `${value.toFixed(value < 10 ? 2 : 1)} ms`;
const ratio = (value: number) => `${value.toFixed(2)}x`;
const us = (value: number) => `${Math.round(value)} µs`;
const each = (values: readonly number[], format: (value: number) => string) => values.map(format).join(' / ');
const rps = (run: Run) => run.load.requestsPerSecond;
/** The server's CPU (every thread) per acknowledged delivery, µs. */
const cpuPerDelivery = (run: Run) => (run.stats.cpuMs * 1000) / run.load.ok2xx;
const mainPerDelivery = (run: Run) => (run.stats.mainThreadCpuMs * 1000) / run.load.ok2xx;

function resultTable(results: ReadonlyMap<Target, Run[]>): string[] {
  const lines = [
    '| target | requests/s, median (each round) | server CPU per delivery, median (each round) | main thread per delivery ' +
      '| p50 / p99 (median round) | server CPU | votes per commit | generator CPU |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const [target, runs] of results) {
    const middle = [...runs].sort((a, b) => rps(a) - rps(b))[runs.length >> 1]!;
    const perCommit = runs.filter((run) => run.stats.commits > 0).map((run) => run.stats.accepted / run.stats.commits);
    const cells = [
      `${target.label}${target.base ? ` [base: ${BASE_DIST}]` : ''}`,
      `**${count(median(runs.map(rps)))}** (${each(runs.map(rps), count)})`,
      `**${us(median(runs.map(cpuPerDelivery)))}** (${each(runs.map(cpuPerDelivery), us)})`,
      Number.isFinite(middle.stats.mainThreadCpuMs) ? us(median(runs.map(mainPerDelivery))) : '',
      `${ms(middle.load.p50Ms)} / ${ms(middle.load.p99Ms)}`,
      `${Math.round(median(runs.map((run) => (run.stats.cpuMs / run.stats.wallMs) * 100)))}%`,
      perCommit.length > 0 ? median(perCommit).toFixed(1) : '',
      `${Math.round(median(runs.map((run) => run.load.generatorCpuPercent)))}%`,
    ];
    lines.push(`| ${cells.join(' | ')} |`);
  }
  return lines;
}

/** Per round: (r)'s CPU per delivery over (m)'s, and (r)'s requests/s over (s)'s; their medians are the verdicts. */
function ratios(results: ReadonlyMap<Target, Run[]>, base = false) {
  const wanted = (target: Target, name: Target['name']) => target.name === name && (target.base ?? false) === (name === 'receiver' && base);
  const runs = (name: Target['name']) => [...results].find(([target]) => wanted(target, name))?.[1];
  const [receiver, minimal, sdk] = [runs('receiver'), runs('minimal'), runs('topgg-sdk')];
  const cpu = receiver && minimal ? receiver.map((run, i) => cpuPerDelivery(run) / cpuPerDelivery(minimal[i]!)) : undefined;
  const throughput = receiver && sdk ? receiver.map((run, i) => rps(run) / rps(sdk[i]!)) : undefined;
  return { cpu, throughput };
}

function verdictTable(results: ReadonlyMap<Target, Run[]>): string[] {
  const lines = ['| target (median of the rounds) | measured (each round) | target | |', '| --- | ---: | ---: | --- |'];
  for (const base of BASE_DIST ? [false, true] : [false]) {
    const { cpu, throughput } = ratios(results, base);
    const which = base ? ' [base]' : '';
    if (cpu) {
      const value = median(cpu);
      const cells = [`(r)${which} CPU per delivery / (m)'s`, `**${ratio(value)}** (${each(cpu, ratio)})`, `<= ${ratio(CPU_RATIO_TARGET)}`];
      lines.push(`| ${cells.join(' | ')} | ${verdict(value <= CPU_RATIO_TARGET)} |`);
    }
    if (throughput) {
      const value = median(throughput);
      const measured = `**${ratio(value)}** (${each(throughput, ratio)})`;
      const cells = [`(r)${which} requests/s / (s)'s`, measured, `>= ${ratio(THROUGHPUT_RATIO_TARGET)}`];
      lines.push(`| ${cells.join(' | ')} | ${verdict(value >= THROUGHPUT_RATIO_TARGET)} |`);
    }
  }
  return lines;
}

function report(results: ReadonlyMap<Target, Run[]>, problems: readonly string[], loadBefore: string, loadAfter: string): string {
  const pinned = pinning
    ? `generator pinned to core ${pinning.generatorCpu}, the server's event-loop thread to core ${pinning.serverCpu}`
    : 'not pinned to cores';
  const notes = [
    machineNote(loadBefore, loadAfter),
    [
      `Load: autocannon ${versionOf('autocannon')} in the bench process, ${CONNECTIONS} keep-alive connections, per target and round a`,
      `fresh server process (${pinned}), ${WARMUP_SECONDS} s warm-up, then ${MEASURE_SECONDS} s measured; ${ROUNDS} rounds, alternating`,
      `the order; on 127.0.0.1; ${BODY_BYTES}-byte bodies, every request a distinct vote. (s) is @top-gg/sdk ${versionOf('@top-gg/sdk')}`,
      `on express ${versionOf('express')}; NODE_ENV=production for every server. Server CPU per delivery: user + system time of the whole`,
      'server process over the measured phase (for (r) until its listener has seen every acknowledged vote), per 2xx; main thread: the',
      "event loop's thread alone; votes per commit: (m)'s lines per write + fdatasync.",
    ].join(' '),
  ];
  const receiver = [...results].filter(([target]) => target.name === 'receiver');
  const logged = receiver.map(([, runs]) => count(median(runs.map((run) => run.stats.logLines ?? 0))));
  if (logged.length > 0) {
    notes.push(
      'Logging: (r) logs as `listing-agent run` does by default (pino, level info, JSON lines, each written synchronously to ' +
        `/dev/null): ${logged.join(', ')} lines in a measured run (median).`,
    );
  }
  if (problems.length > 0) notes.push(`PROBLEMS: ${problems.join('; ')}`);
  return `\nWebhook receiver:\n\n${resultTable(results).join('\n')}\n\n${verdictTable(results).join('\n')}\n\n${notes.join('\n\n')}\n`;
}

/** What makes a run unfair to compare: a target that did not verify, refused, dropped or repeated votes. */
function problemsOf(results: ReadonlyMap<Target, Run[]>): string[] {
  const problems: string[] = [];
  for (const [target, runs] of results) {
    for (const { load, stats, good, forged: bad, wrapped } of runs) {
      if (good < 200 || good > 299) problems.push(`${target.name} answered ${good} to a good delivery`);
      if (bad < 400 || bad > 499) problems.push(`${target.name} answered ${bad} to a forged delivery`);
      if (load.non2xx > 0 || load.errors > 0) problems.push(`${target.name}: ${load.non2xx} non-2xx, ${load.errors} errors or timeouts`);
      if (load.total === 0 || stats.handled < load.ok2xx) problems.push(`${target.name} handled ${stats.handled} of ${load.ok2xx} 2xx`);
      if (wrapped && REMEMBERS_VOTES.has(target.name)) problems.push(`${target.name}: the pool of ${POOL.v1} distinct votes wrapped`);
    }
  }
  return problems;
}

async function run(): Promise<void> {
  assertFreshBuild();
  const loadBefore = loadAverage();
  const only = process.env.BENCH_WEBHOOK_TARGETS?.split(',').map((name) => name.trim());
  let targets = TARGETS.filter((target) => !only || only.includes(target.name));
  if (targets.length === 0) throw new Error(`BENCH_WEBHOOK_TARGETS matches none of ${TARGETS.map((t) => t.name).join(', ')}`);
  if (BASE_DIST) targets = targets.flatMap((target) => (target.name === 'receiver' ? [target, { ...target, base: true }] : [target]));
  const service = await startBenchService();
  const results = new Map<Target, Run[]>(targets.map((target) => [target, []]));
  const unpin = pinGenerator();
  try {
    for (let round = 0; round < ROUNDS; round++) {
      // Signed now: the deliveries' time stays well inside the receivers' 300 s tolerance.
      const nowMs = Date.now();
      const pools = {
        // The bench bot's own project: the receiver refuses a vote for another one (issue 34).
        v1: voteCreateDeliveries({ count: POOL.v1, secret: TARGET_V1_SECRET, ...ownProject(service), nowMs }),
        v0: legacyUpvoteDeliveries({ count: POOL.v0, secret: TARGET_V0_SECRET, botId: service.platformId }),
      };
      for (const target of round % 2 === 0 ? targets : [...targets].reverse()) {
        results.get(target)!.push(await measure(target, pools[target.scheme], service));
      }
    }
  } finally {
    unpin();
    await service.close();
  }
  const problems = problemsOf(results);
  console.log(report(results, problems, loadBefore, loadAverage()));
  if (problems.length > 0) throw new Error(`webhook bench: ${problems.join('; ')}`);
}

describe('webhook receiver', () => {
  bench(`${TARGETS.length} targets x ${ROUNDS} rounds, ${CONNECTIONS} connections, ${MEASURE_SECONDS} s each`, run, {
    iterations: 1,
    time: 0,
    warmupIterations: 0,
    warmupTime: 0,
  });
});
