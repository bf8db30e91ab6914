/**
 * Webhook receiver throughput: requests per second and latency of 1 KiB signed `vote.create`
 * deliveries on 127.0.0.1, in one run, for
 *   (a') the headline: our receiver (`createWebhookReceiver`) with the real vote pipeline on the
 *        file ledger (every vote durably pending, written and fsynced by group commit, before its
 *        2xx) and one in-process hook: what a bot owner runs (issue 20),
 *   (a'') the same on the Redis ledger, against a redis-server the bench starts (appendfsync
 *        always, so a reply means durable); skipped with a line saying so when there is none,
 *   (a)  our receiver with a no-op pipeline, so neither disk nor Redis is measured (information),
 *   (b)  `@top-gg/sdk`'s `Webhook.listener` on Express (legacy scheme: v0 `upvote` bodies of the
 *        same size with `Authorization: <secret>`), the package users would otherwise pick,
 *   (c)  a bare node:http server that only checks the HMAC (node:crypto, timingSafeEqual) and
 *        answers 204: the practical ceiling.
 *
 * Our receiver logs as the daemon does by default (pino at `info`, JSON lines, to /dev/null), so
 * what it logs per delivery at that level is measured too (the report counts the lines).
 *
 * Run:  npm run bench:webhooks      (= npm run build && vitest bench --run bench/webhooks.bench.ts)
 *
 * About a minute. Our receiver is TypeScript and runs in a child process, so it is loaded from the
 * built dist/: `npm run bench -- bench/webhooks.bench.ts` works too once `npm run build` is done
 * (the bench refuses a dist/ older than src/). `BENCH_WEBHOOK_TARGETS=receiver-ledger,bare` measures
 * only those targets (names in TARGETS below); `BENCH_NO_PIN=1` leaves the processes unpinned;
 * `BENCH_CPU_PROFILE_DIR=<dir>` writes a CPU profile of each measured run (bench/PROFILE.md).
 * `BENCH_BASE_DIST=<other checkout>/dist` adds, after each of our receivers, the same receiver
 * loaded from that build ("[base]"), so that two builds alternate in one run on one machine;
 * `BENCH_ROUNDS=<n>` (default 2) sets the rounds, and a table per round gives each build's
 * ratios against (c) in that round.
 *
 * The load generator is autocannon (npm), in this process; each server runs in a process of its
 * own (bench/helpers/webhook-target.mjs). On Linux with `taskset` the generator is pinned to core
 * 0 and the server's event-loop thread to core 1, so the two never share a core (see `pinning`).
 * Per target and round: a new server process; one good delivery must get a 2xx and one forged
 * delivery a 4xx (each target really verifies); a 1 s warm-up; 5 s measured with 32 keep-alive
 * connections. Two rounds, the second in reverse order; the table shows each target's best round
 * (interference from other work on the machine only lowers a result) and lists every round's
 * requests/s. Every request is a distinct vote (a different user, so a different vote key) from a
 * pool of bodies signed before the run (signing is not the generator's work during it; the run
 * takes about a minute, well inside the 300 s tolerance). Any non-2xx, connection error or timeout
 * fails the bench: the comparison is only fair when every target accepted everything. Load goes
 * to 127.0.0.1 only and every run is bounded in time; the targets exit by themselves if this
 * process goes away, and after 120 s in any case.
 *
 * autocannon rather than wrk: it is an npm devDependency (nothing to install on the machine), it
 * can send a different signed body on every request, and it is not the limit here: the servers
 * run at ~100% of their core, and wrk (Debian's 4.1) gave the bare server fewer requests/s, not more.
 *
 * vitest prints its own line (one iteration: the whole run); the Markdown tables at the end are the
 * result, with each server's CPU use: near 100% of a core means the server is the bottleneck, and
 * its CPU time per request is the steadiest number when the machine is busy with other work.
 */
import { readdirSync, statSync } from 'node:fs';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { bench, describe } from 'vitest';
import type { TestRedis } from '../test/helpers/redis.js';
import {
  BODY_BYTES,
  legacyUpvoteDeliveries,
  loadRun,
  pinGenerator,
  pinning,
  sendOnce,
  startTarget,
  voteCreateDeliveries,
  type Delivery,
  type LoadResult,
  type TargetStats,
} from './helpers/webhook-load.js';

const CONNECTIONS = 32;
const WARMUP_SECONDS = 1;
const MEASURE_SECONDS = 5;
/** Every target is measured this many times (the second round in reverse order); the best round counts. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
/** `BENCH_BASE_DIST`: a second build of the agent, measured beside this one in the same run. */
const BASE_DIST = process.env.BENCH_BASE_DIST;
/**
 * Distinct votes per scheme (about 1.2 KiB each with headers). The ledger target, the only one
 * that remembers votes, must stay inside it for its warm-up and run, or it would measure
 * duplicates; the others go round it freely.
 */
const POOL = { v1: 150_000, v0: 50_000 };

const V1_SECRET = 'whs_bench_0123456789abcdefghijklmnopqrstuv';
const V0_SECRET = 'bench-legacy-webhook-authorization-secret';
const PROJECT_ID = '803190510032756736';
const BOT_ID = '1234567890123456789';
const PATH = '/webhooks/topgg';

interface Target {
  label: string;
  /** The argument of bench/helpers/webhook-target.mjs. */
  name: 'receiver' | 'receiver-ledger' | 'receiver-redis' | 'topgg-sdk' | 'bare';
  scheme: 'v1' | 'v0';
  /** Loaded from `BENCH_BASE_DIST` instead of this repository's dist/. */
  base?: boolean;
}

const TARGETS: readonly Target[] = [
  { label: "**(a') listing-agent receiver, real pipeline + file ledger (the headline: every vote durably pending before its 2xx)**", name: 'receiver-ledger', scheme: 'v1' },
  { label: "(a'') listing-agent receiver, real pipeline + Redis ledger (local redis-server, appendfsync always)", name: 'receiver-redis', scheme: 'v1' },
  { label: '(a) listing-agent receiver, no-op pipeline (information: nothing recorded)', name: 'receiver', scheme: 'v1' },
  { label: '(b) @top-gg/sdk `Webhook.listener` on Express (v0 `Authorization`)', name: 'topgg-sdk', scheme: 'v0' },
  { label: '(c) bare node:http, HMAC check only, 204 (ceiling)', name: 'bare', scheme: 'v1' },
];

/** Targets that remember votes: their pool must not wrap (a repeat is a duplicate, cheaper than a vote). */
const REMEMBERS_VOTES: ReadonlySet<Target['name']> = new Set(['receiver-ledger', 'receiver-redis']);

interface Row {
  target: Target;
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

/** Every src/**\/*.ts must have a dist/**\/*.js at least as new (the targets load dist/). */
function assertFreshBuild(): void {
  const stale: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(join(root, 'src', dir), { withFileTypes: true })) {
      const rel = join(dir, entry.name);
      if (entry.isDirectory()) walk(rel);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) {
        const built = join(root, 'dist', rel.replace(/\.ts$/, '.js'));
        let builtAt = 0;
        try {
          builtAt = statSync(built).mtimeMs;
        } catch {
          // missing: stale
        }
        if (builtAt < statSync(join(root, 'src', rel)).mtimeMs) stale.push(rel);
      }
    }
  };
  walk('');
  if (stale.length > 0) {
    throw new Error(`dist/ is older than src/ (${stale.slice(0, 5).join(', ')}${stale.length > 5 ? ', ...' : ''}): run \`npm run build\` first, or \`npm run bench:webhooks\``);
  }
}

/** A copy of `delivery` that must be refused: the signature (v1) or the secret (v0) is wrong. */
function forged(delivery: Delivery, scheme: Target['scheme']): Delivery {
  const headers = { ...delivery.headers };
  if (scheme === 'v0') headers.authorization = `${V0_SECRET}x`;
  else headers['x-topgg-signature'] = (headers['x-topgg-signature'] as string).replace(/v1=([0-9a-f])/, (_m, c: string) => `v1=${c === '0' ? '1' : '0'}`);
  return { body: delivery.body, headers };
}

async function measure(target: Target, pool: readonly Delivery[], cursor: { next: number }, extraEnv: Record<string, string>): Promise<Row> {
  const env = { BENCH_V1_SECRET: V1_SECRET, BENCH_V0_SECRET: V0_SECRET, BENCH_PROJECT_ID: PROJECT_ID, BENCH_PATH: PATH, ...extraEnv };
  const server = await startTarget(target.name, target.base && BASE_DIST ? { ...env, BENCH_DIST: BASE_DIST } : env);
  try {
    const sample = pool[cursor.next++ % pool.length] as Delivery;
    const good = await sendOnce(server.url, sample);
    const bad = await sendOnce(server.url, forged(pool[cursor.next++ % pool.length] as Delivery, target.scheme));
    await loadRun({ url: server.url, pool, cursor, connections: CONNECTIONS, seconds: WARMUP_SECONDS });
    await server.reset();
    const load = await loadRun({ url: server.url, pool, cursor, connections: CONNECTIONS, seconds: MEASURE_SECONDS });
    const stats = await server.stop();
    return { target, load, stats, good, forged: bad, wrapped: cursor.next > pool.length };
  } catch (error) {
    server.kill();
    throw error;
  }
}

const count = (value: number) => Math.round(value).toLocaleString('en-US');
const ms = (value: number) => `${value.toFixed(value < 10 ? 2 : 1)} ms`;
const ratio = (value: number) => `${value.toFixed(2)}x`;
const percent = (value: number) => `${Math.round(value)}%`;

/** The round with the most requests/s: interference from elsewhere on the machine only ever lowers it. */
function best(rows: readonly Row[]): Row {
  return rows.reduce((top, row) => (row.load.requestsPerSecond > top.load.requestsPerSecond ? row : top));
}

/** One ratio row: `numerator / denominator` of requests/s against a target (or information when `min` is undefined). */
function ratioRow(name: string, value: number, min?: number, note = ''): string {
  if (min === undefined) return `| ${name} | ${ratio(value)} | | ${note} |`;
  return `| ${name} | **${ratio(value)}** | >= ${min}x | ${value >= min ? 'met' : '**NOT met**'}${note ? `; ${note}` : ''} |`;
}

function resultTable(results: ReadonlyMap<Target, Row[]>): string[] {
  const lines = [
    '| target | requests/s | p50 | p99 | non-2xx | errors | requests/s of each round | server CPU | server CPU per request | main thread CPU per request | votes per commit | load generator CPU |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const [target, rows] of results) {
    const { load, stats } = best(rows);
    const cells = [
      target.label,
      count(load.requestsPerSecond),
      ms(load.p50Ms),
      ms(load.p99Ms),
      count(rows.reduce((sum, row) => sum + row.load.non2xx, 0)),
      count(rows.reduce((sum, row) => sum + row.load.errors, 0)),
      rows.map((row) => count(row.load.requestsPerSecond)).join(' / '),
      percent((stats.cpuMs / stats.wallMs) * 100),
      `${Math.round((stats.cpuMs * 1000) / stats.handled)} µs`,
      Number.isFinite(stats.mainThreadCpuMs) ? `${Math.round((stats.mainThreadCpuMs * 1000) / stats.handled)} µs` : '',
      stats.commits > 0 ? (stats.accepted / stats.commits).toFixed(1) : '',
      percent(load.generatorCpuPercent),
    ];
    lines.push(`| ${cells.join(' | ')} |`);
  }
  return lines;
}

function ratioTable(results: ReadonlyMap<Target, Row[]>): string[] {
  const row = (name: Target['name']) => {
    const entry = [...results].find(([target]) => target.name === name && !target.base);
    return entry && best(entry[1]);
  };
  const [durable, redis, noop, sdk, bare] = [row('receiver-ledger'), row('receiver-redis'), row('receiver'), row('topgg-sdk'), row('bare')];
  const rps = (r: Row) => r.load.requestsPerSecond;
  const perRequest = (r: Row) => r.stats.cpuMs / r.stats.handled;
  const lines = ['| ratio | measured | target | |', '| --- | ---: | ---: | --- |'];
  if (durable && bare) lines.push(ratioRow("requests/s (a') durable / (c) bare", rps(durable) / rps(bare), 0.7, 'the headline'));
  if (durable && sdk) lines.push(ratioRow("requests/s (a') durable / (b) @top-gg/sdk", rps(durable) / rps(sdk), 4));
  if (redis && bare) lines.push(ratioRow("requests/s (a'') Redis / (c) bare", rps(redis) / rps(bare), 0.4));
  if (durable && bare) lines.push(ratioRow("server CPU per request (c) / (a')", perRequest(bare) / perRequest(durable), undefined, 'steadier than requests/s on a busy machine'));
  if (durable && sdk) lines.push(ratioRow("server CPU per request (b) / (a')", perRequest(sdk) / perRequest(durable)));
  if (durable && bare) lines.push(ratioRow("p99 latency (a') / (c)", durable.load.p99Ms / bare.load.p99Ms, undefined, 'lower is better'));
  if (noop && bare) lines.push(ratioRow('requests/s (a) no-op / (c) bare (information)', rps(noop) / rps(bare)));
  if (noop && sdk) lines.push(ratioRow('requests/s (a) no-op / (b) @top-gg/sdk (information)', rps(noop) / rps(sdk)));
  return lines;
}

/**
 * Every round of every target against (c) bare in the same round: requests/s, server CPU per
 * request, and the two ratios, so that two builds (`BENCH_BASE_DIST`) compare round by round.
 */
function roundTable(results: ReadonlyMap<Target, Row[]>): string[] {
  const bare = [...results].find(([target]) => target.name === 'bare')?.[1];
  const lines = [
    '| round | target | requests/s | server CPU per request | main thread per request | votes per commit | requests/s / (c) | CPU per request (c) / this |',
    '| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (let round = 0; round < ROUNDS; round++) {
    for (const [target, rows] of results) {
      const row = rows[round];
      if (!row || target.name === 'bare') continue;
      const c = bare?.[round];
      const perRequest = (r: Row) => (r.stats.cpuMs * 1000) / r.stats.handled;
      const cells = [
        String(round + 1),
        `${target.name}${target.base ? ' [base]' : ''}`,
        count(row.load.requestsPerSecond),
        `${Math.round(perRequest(row))} µs`,
        Number.isFinite(row.stats.mainThreadCpuMs) ? `${Math.round((row.stats.mainThreadCpuMs * 1000) / row.stats.handled)} µs` : '',
        row.stats.commits > 0 ? (row.stats.accepted / row.stats.commits).toFixed(1) : '',
        c ? ratio(row.load.requestsPerSecond / c.load.requestsPerSecond) : '',
        c ? ratio(perRequest(c) / perRequest(row)) : '',
      ];
      lines.push(`| ${cells.join(' | ')} |`);
    }
  }
  return lines;
}

function report(results: ReadonlyMap<Target, Row[]>, problems: readonly string[], skipped: readonly string[], loadBefore: string, loadAfter: string): string {
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  const notes = [
    `Machine: ${availableParallelism()} cores (nproc), ${cpu}, Node ${process.version}, ${process.platform}; ${new Date().toISOString().slice(0, 10)}; load average (1, 5, 15 min) before the run ${loadBefore}, after it ${loadAfter}.`,
    `Load: autocannon ${versionOf('autocannon')} in the bench process, ${CONNECTIONS} keep-alive connections, per target and round a fresh server process (${pinning ? `load generator pinned to core ${pinning.generatorCpu}, the server's event-loop thread to core ${pinning.serverCpu}` : 'not pinned to cores'}), ${WARMUP_SECONDS} s warm-up, then ${MEASURE_SECONDS} s measured; ${ROUNDS} rounds (the second in reverse order), the table shows each target's best round; on 127.0.0.1; ${BODY_BYTES}-byte bodies, every request a distinct vote. (b) is @top-gg/sdk ${versionOf('@top-gg/sdk')} on express ${versionOf('express')}, NODE_ENV=production for every server. Latencies from each response's own time (autocannon's histogram rounds to whole ms). Server CPU: user + system time of the server process over the measured ${MEASURE_SECONDS} s, in percent of one core (above 100%: its helper threads too: libuv's pool, which runs the ledger's write and fsync, and V8's garbage collection), and per request it handled; main thread CPU: the event loop's thread alone; votes per commit: votes recorded per journal write + fsync (group commit); the load generator's CPU likewise.`,
  ];
  for (const name of ['receiver-ledger', 'receiver-redis'] as const) {
    const entry = [...results].find(([target]) => target.name === name);
    if (!entry) continue;
    const { stats } = best(entry[1]);
    notes.push(`${name === 'receiver-ledger' ? "(a')" : "(a'')"} in its best round: ${count(stats.accepted)} votes recorded as pending, ${count(stats.hooked)} hook calls, ${count(stats.duplicates)} duplicates, server RSS ${(stats.rssBytes / 2 ** 20).toFixed(0)} MiB at the end.`);
  }
  const logged = [...results].filter(([target]) => target.name.startsWith('receiver')).map(([target, rows]) => `${target.name} ${count(best(rows).stats.logLines ?? 0)}`);
  if (logged.length > 0) notes.push(`Logging: our receivers log as \`listing-agent run\` does by default (pino, level info, JSON lines, each written synchronously to /dev/null); lines written in the measured ${MEASURE_SECONDS} s of the best round: ${logged.join(', ')}.`);
  for (const line of skipped) notes.push(`SKIPPED: ${line}`);
  if (problems.length > 0) notes.push(`PROBLEMS: ${problems.join('; ')}`);
  const rounds = BASE_DIST || ROUNDS > 2 ? `\n\n${roundTable(results).join('\n')}` : '';
  return `\nWebhook receiver:\n\n${resultTable(results).join('\n')}\n\n${ratioTable(results).join('\n')}${rounds}\n\n${notes.join('\n\n')}\n`;
}

const loadAverage = () => loadavg().map((value) => value.toFixed(2)).join(', ');

/**
 * A local redis-server for the Redis ledger's row (appendfsync always: every write durable before
 * its reply, as the file ledger's fsync), or why there is none.
 */
async function startRedis(): Promise<{ redis?: TestRedis; skipped?: string }> {
  try {
    const { startTestRedis } = await import('../test/helpers/redis.js');
    return { redis: await startTestRedis() };
  } catch (error) {
    return { skipped: `(a'') the Redis ledger's row: no redis-server could be started (${error instanceof Error ? error.message : String(error)}); install it (apt-get install redis-server) to measure it` };
  }
}

async function run(): Promise<void> {
  assertFreshBuild();
  const loadBefore = loadAverage();
  const only = process.env.BENCH_WEBHOOK_TARGETS?.split(',').map((name) => name.trim());
  let targets = TARGETS.filter((target) => !only || only.includes(target.name));
  if (targets.length === 0) throw new Error(`BENCH_WEBHOOK_TARGETS matches none of ${TARGETS.map((t) => t.name).join(', ')}`);
  if (BASE_DIST) targets = targets.flatMap((target) => (target.name.startsWith('receiver') ? [target, { ...target, label: `${target.label} [base: ${BASE_DIST}]`, base: true }] : [target]));
  const skipped: string[] = [];
  let redis: TestRedis | undefined;
  if (targets.some((target) => target.name === 'receiver-redis')) {
    const started = await startRedis();
    redis = started.redis;
    if (started.skipped) {
      skipped.push(started.skipped);
      targets = targets.filter((target) => target.name !== 'receiver-redis');
    }
  }
  const nowMs = Date.now();
  const v1 = voteCreateDeliveries({ count: POOL.v1, secret: V1_SECRET, projectId: PROJECT_ID, botId: BOT_ID, nowMs });
  const v0 = legacyUpvoteDeliveries({ count: POOL.v0, secret: V0_SECRET, botId: BOT_ID });
  const results = new Map<Target, Row[]>(targets.map((target) => [target, []]));
  const unpin = pinGenerator();
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const target of round % 2 === 0 ? targets : [...targets].reverse()) {
        // Each run starts from the pool's beginning: a new process, a new (empty) ledger (the
        // Redis one under a prefix of its own).
        const env: Record<string, string> = redis ? { BENCH_REDIS_URL: redis.url } : {};
        results.get(target)?.push(await measure(target, target.scheme === 'v1' ? v1 : v0, { next: 0 }, env));
      }
    }
  } finally {
    unpin();
    await redis?.close();
  }
  const problems: string[] = [];
  for (const [target, rows] of results) {
    for (const { load, stats, good, forged: bad, wrapped } of rows) {
      if (good < 200 || good > 299) problems.push(`${target.name} answered ${good} to a good delivery`);
      if (bad < 400 || bad > 499) problems.push(`${target.name} answered ${bad} to a forged delivery`);
      if (load.non2xx > 0 || load.errors > 0) problems.push(`${target.name}: ${load.non2xx} non-2xx, ${load.errors} errors or timeouts`);
      if (load.total === 0 || stats.handled < load.ok2xx) problems.push(`${target.name} handled ${stats.handled} of ${load.ok2xx} answered with 2xx`);
      // Only the ledgers remember votes: for the stateless targets a repeat costs what a new vote does.
      if (wrapped && REMEMBERS_VOTES.has(target.name)) problems.push(`${target.name}: the pool of ${POOL.v1} distinct votes wrapped (repeats are duplicates)`);
    }
  }
  console.log(report(results, problems, skipped, loadBefore, loadAverage()));
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
