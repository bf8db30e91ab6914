/**
 * Start-up: from spawning the process to its first successful post to the service (the emulator,
 * in this process), for
 *   (a)  the daemon, `node dist/cli/main.js run`, stats source `push`, votes and webhooks on, the
 *        bot's first report sent the moment the push endpoint listens;
 *   (a2) the same, the bot's first report sent 1 s after the agent is ready (a bot that finishes
 *        logging in after its sidecar: the counts become ready while the agent runs);
 *   (b)  the daemon with stats source `discord-rest` against the fake Discord REST API
 *        (src/testing), votes and webhooks on: it reads the counts itself;
 *   (d)  the daemon with stats source `redis` (a sidecar leader posting the sum of the shard reports
 *        bot processes write to Redis; a test redis-server), votes and webhooks on: both shards'
 *        reports written 1 s after the agent is ready;
 *   (c)  topgg-autoposter 2.0.2 (bench/helpers/autoposter.mjs: its BasePoster over a stand-in
 *        client, the sdk's requests sent to the emulator), whose counts are ready at once.
 * "Counts ready" is when the push was answered 204 (a, a2), the daemon's own `counts ready` log
 * line (b), the reports' write returned (d), the process start (c). The post time is the emulator's log entry of the first 2xx
 * `POST .../metrics/batch` (ours) or `POST /api/bots/stats` (the autoposter).
 * Also measured: `node -e 0`, `node dist/cli/main.js --version` and `run --help` (what loading the modules costs).
 *
 * Run:  npm run bench:startup     (= npm run build && vitest bench --run bench/startup.bench.ts), about 80 s.
 * `BENCH_STARTUP_ROUNDS` (default 5) runs per case; the table gives median, min and max.
 */
import { spawnSync } from 'node:child_process';
import { bench, describe } from 'vitest';
import { startEmulator, type RunningEmulator } from '../src/emulator/index.js';
import { createRedisConnection } from '../src/redis/connection.js';
import { createShardReporter } from '../src/stats/sources/redis-shards.js';
import { startFakeDiscordRest } from '../src/testing/index.js';
import { startTestRedis, type TestRedis } from '../test/helpers/redis.js';
import { assertBuilt, CLI_PATH, machine, pushCounts, sleep, spawnAutoposter, spawnDaemon, table, until } from './helpers/daemon.js';

const ROUNDS = Number(process.env.BENCH_STARTUP_ROUNDS ?? 5);
const SHARDS = [617, 617];
const TARGET_MS = 500;

interface Round {
  /** Process start to the first successful post, ms. */
  startToPost: number;
  /** Counts ready to the first successful post, ms. */
  readyToPost: number;
  /** Process start to counts ready, ms. */
  startToReady: number;
}

function firstPost(emu: RunningEmulator, from: number, path: RegExp): number | undefined {
  const hit = emu.admin.requests().slice(from).find((r) => r.method === 'POST' && path.test(r.path) && r.status >= 200 && r.status < 300);
  return hit ? Date.parse(hit.at) : undefined;
}

async function ours(emu: RunningEmulator, token: string, mode: 'push-at-once' | 'push-after-ready' | 'discord-rest', discord?: { url: string; token: string }): Promise<Round> {
  const from = emu.admin.requests().length;
  const daemon = spawnDaemon({
    v1: emu.urls.v1,
    v0: emu.urls.v0,
    token,
    stats: mode === 'discord-rest' ? { source: 'discord-rest', apiBaseUrl: discord!.url, discordToken: discord!.token } : { source: 'push' },
    votes: true,
    webhooks: true,
  });
  try {
    let readyAt: number;
    if (mode === 'discord-rest') {
      readyAt = Date.parse((await daemon.waitFor('counts ready')).time);
    } else {
      const listening = await daemon.waitFor('push endpoint listening');
      if (mode === 'push-after-ready') {
        await daemon.waitFor('agent ready');
        await sleep(1_000);
      }
      const pushed = await pushCounts(listening.url as string, SHARDS);
      if (pushed.status !== 204) throw new Error(`push answered ${pushed.status}`);
      readyAt = pushed.atEpoch;
    }
    const postedAt = await until(() => firstPost(emu, from, /\/metrics\/batch$/), 15_000, 'the first metrics batch');
    return { startToPost: postedAt - daemon.spawnedAtEpoch, readyToPost: postedAt - readyAt, startToReady: readyAt - daemon.spawnedAtEpoch };
  } finally {
    await daemon.stop();
  }
}

let redisRounds = 0;

/** (d): the daemon as the leader summing Redis shard reports, written 1 s after it is ready. */
async function redisLeader(emu: RunningEmulator, token: string, redis: TestRedis): Promise<Round> {
  const from = emu.admin.requests().length;
  const prefix = `bench-startup-${++redisRounds}:`;
  const daemon = spawnDaemon({
    v1: emu.urls.v1,
    v0: emu.urls.v0,
    token,
    stats: { source: 'redis' },
    votes: true,
    webhooks: true,
    env: { LISTING_AGENT_STATE_REDIS_URL: redis.url, LISTING_AGENT_STATE_REDIS_PREFIX: prefix, LISTING_AGENT_STATS_REDIS_SHARD_COUNT: String(SHARDS.length) },
  });
  const connection = createRedisConnection({ url: redis.url, prefix });
  connection.start();
  try {
    await daemon.waitFor('agent ready');
    await connection.whenUp({ timeoutMs: 5_000 });
    await sleep(1_000);
    const reporter = createShardReporter({
      connection,
      source: { description: 'bench shards', read: async () => ({ ready: true, serverCount: SHARDS[0]! + SHARDS[1]!, shardCount: SHARDS.length, shards: SHARDS }) },
      everyMs: 60_000,
      ttlMs: 600_000,
    });
    const written = await reporter.reportNow();
    if (written.length !== SHARDS.length) throw new Error(`wrote reports for shards ${written.join(', ')}`);
    const readyAt = Date.now();
    const postedAt = await until(() => firstPost(emu, from, /\/metrics\/batch$/), 15_000, 'the first metrics batch');
    return { startToPost: postedAt - daemon.spawnedAtEpoch, readyToPost: postedAt - readyAt, startToReady: readyAt - daemon.spawnedAtEpoch };
  } finally {
    await daemon.stop();
    await connection.close();
  }
}

async function autoposter(emu: RunningEmulator, token: string): Promise<Round> {
  const from = emu.admin.requests().length;
  const poster = spawnAutoposter({ origin: emu.urls.origin, token, serverCount: SHARDS[0]! + SHARDS[1]!, shardCount: SHARDS.length });
  try {
    const postedAt = await until(() => firstPost(emu, from, /^\/api\/bots\/stats$/), 15_000, "the autoposter's first post");
    // Its counts are ready from the start: the stand-in client is ready when the poster is made.
    return { startToPost: postedAt - poster.spawnedAtEpoch, readyToPost: postedAt - poster.spawnedAtEpoch, startToReady: 0 };
  } finally {
    await poster.stop();
  }
}

function wallMs(args: string[]): number {
  const started = performance.now();
  const result = spawnSync(process.execPath, args, { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`node ${args.join(' ')} exited ${result.status}: ${result.stderr}`);
  return performance.now() - started;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const ms = (value: number) => `${Math.round(value).toLocaleString('en-US')} ms`;
const spread = (values: number[]) => `${ms(median(values))} (${ms(Math.min(...values))} – ${ms(Math.max(...values))})`;

async function run(): Promise<string> {
  assertBuilt();
  const header = await machine();
  const emu = await startEmulator();
  const fake = await startFakeDiscordRest({ token: 'bench-discord-token', approximateGuildCount: SHARDS[0]! + SHARDS[1]!, recommendedShards: SHARDS.length, remaining: 10_000 });
  const redis = await startTestRedis();
  try {
    const owner = emu.admin.createUser({ username: 'bench-owner' });
    const { project_token: token } = emu.admin.createProject({ platform: 'discord', type: 'bot', owner_user_id: owner.id, name: 'Bench Bot' });
    const cases: Array<{ label: string; run: () => Promise<Round> }> = [
      { label: '(a) daemon, push, report sent when the endpoint listens', run: () => ours(emu, token, 'push-at-once') },
      { label: '(a2) daemon, push, report sent 1 s after the agent is ready', run: () => ours(emu, token, 'push-after-ready') },
      { label: '(b) daemon, discord-rest (fake Discord)', run: () => ours(emu, token, 'discord-rest', { url: fake.url, token: 'bench-discord-token' }) },
      { label: '(d) daemon, redis (the sum of shard reports), reports written 1 s after the agent is ready', run: () => redisLeader(emu, token, redis) },
      { label: '(c) topgg-autoposter 2.0.2', run: () => autoposter(emu, token) },
    ];
    const rows: string[][] = [];
    const verdicts: string[][] = [];
    for (const c of cases) {
      const rounds: Round[] = [];
      for (let i = 0; i < ROUNDS; i++) rounds.push(await c.run());
      const readyToPost = rounds.map((r) => r.readyToPost);
      rows.push([c.label, spread(rounds.map((r) => r.startToReady)), spread(readyToPost), spread(rounds.map((r) => r.startToPost))]);
      const worst = Math.max(...readyToPost);
      verdicts.push([c.label, ms(median(readyToPost)), ms(worst), `< ${TARGET_MS} ms`, worst < TARGET_MS ? 'met' : median(readyToPost) < TARGET_MS ? '**not met in every run**' : '**not met**']);
    }
    const bare = Array.from({ length: ROUNDS }, () => wallMs(['-e', '0']));
    const version = Array.from({ length: ROUNDS }, () => wallMs([CLI_PATH, '--version']));
    const help = Array.from({ length: ROUNDS }, () => wallMs([CLI_PATH, 'run', '--help']));
    return [
      '',
      `Start-up to the first successful post, ${ROUNDS} runs each, median (min – max). ${header}`,
      '',
      table(['process', 'start → counts ready', 'counts ready → first post', 'start → first post'], rows, ['l', 'r', 'r', 'r']),
      '',
      table(['process', 'counts ready → first post, median', 'worst', 'target', ''], verdicts, ['l', 'r', 'r', 'l', 'l']),
      '',
      table(
        ['process (wall time to exit)', 'median (min – max)'],
        [
          ['`node -e 0`', spread(bare)],
          ['`node dist/cli/main.js --version` (the CLI entry, no command loaded)', spread(version)],
          ['`node dist/cli/main.js run --help` (loads `run` and the agent, starts nothing)', spread(help)],
        ],
        ['l', 'r'],
      ),
      '',
    ].join('\n');
  } finally {
    await redis.close();
    await fake.close();
    await emu.close();
  }
}

describe('start-up', () => {
  bench(
    'process start to first successful post (daemon push / discord-rest, topgg-autoposter)',
    async () => {
      console.log(await run());
    },
    { iterations: 1, time: 0, warmupIterations: 0, warmupTime: 0 },
  );
});
