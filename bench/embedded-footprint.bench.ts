/**
 * The embedded agent's weight inside a discord.js bot (issue 33), side by side with
 * topgg-autoposter, in one run, rounds alternating. Each row is a fresh child process
 * (bench/helpers/embedded-bot.mjs, `node --expose-gc`) started from a temporary bot project with
 * the packed package installed (as test/runtimes/packed.ts installs it: `npm pack`, extracted into
 * node_modules/listing-agent, its dependencies and discord.js and topgg-autoposter linked from this
 * repository's node_modules; undici is discord.js's copy, shared, as npm dedupes it). Every row is
 * a bot that HAS LOGGED IN: its discord.js 14 `Client` logs in to the fake Discord this process
 * runs (src/testing, the kit of `listing-agent/testing`: REST and gateway, READY and its guilds), through the undici the
 * agent shares, before anything else:
 *   (d)  the logged-in bot alone, the baseline;
 *   (p)  + `require('topgg-autoposter')`;
 *   (i)  + `import('listing-agent')`, nothing started;
 *   (s)  + an agent posting stats only (`discord: client`, health off), after its first post;
 *   (f)  + stats, votes (cursor polled) and health (listening), after its first post (information).
 * The emulator (the service) runs in this process, not in the bot's. Heap used and RSS after two
 * forced collections (and, as information, the size of V8's young generation then, which stays as
 * large as it grew: part of the RSS a row adds); import time of the import alone. Added = the
 * row's median minus (d)'s.
 * Targets, on the medians: importing adds at most 3 MiB of heap and takes at most 2x the
 * auto-poster's import time; an agent posting stats adds at most 6 MiB of heap and 8 MiB of RSS.
 *
 * Run:  npm run bench:embedded   (about 3 min; BENCH_ROUNDS, default 9).
 */
import { execFile, spawn } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { bench, describe } from 'vitest';
import { assertBuilt, machine, ROOT, table } from './helpers/daemon.js';
import { MiB } from './helpers/proc.js';
import { startBenchService, type BenchService } from './helpers/service.js';
import { median, verdict } from './helpers/stats.js';
import { linkBotModules } from '../test/helpers/bot-install.js';
import { startFakeDiscord, type FakeDiscord } from '../src/testing/index.js';

/**
 * Rounds: a row's RSS is bimodal (its anonymous memory differs by 20 to 30 MiB from one run to the
 * next with the heap unchanged: native memory, likely glibc's malloc arenas, which
 * bench/arena.bench.ts found keeping memory in the idle daemon), so the RSS targets need the median
 * of more runs than the heap's.
 */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9);
/** The guilds the bot is in (the fake gateway's GUILD_CREATEs after READY). */
const GUILDS = 25;
const HEAP_IMPORT_TARGET = 3 * MiB;
const IMPORT_TIME_TARGET = 2;
const HEAP_STATS_TARGET = 6 * MiB;
const RSS_STATS_TARGET = 8 * MiB;
const run = promisify(execFile);

const ROWS = [
  ['djs', '(d) a discord.js 14 bot, logged in (the baseline)'],
  ['autoposter', '(p) + topgg-autoposter imported'],
  ['import', '(i) + listing-agent imported, nothing started'],
  ['stats', '(s) + an agent posting stats only (health off)'],
  ['full', '(f) + an agent with stats, votes and health (information)'],
] as const;
type Row = (typeof ROWS)[number][0];

interface Sample {
  heapUsed: number;
  rss: number;
  /** V8's young generation (new space) after the collections: information. */
  newSpace: number;
  importMs: number;
}

/** A bot project with the packed package installed, discord.js and topgg-autoposter beside it. */
async function botProject(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'la-footprint-bot-'));
  const pack = join(dir, 'pack');
  await mkdir(pack);
  await run('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', pack], { cwd: ROOT });
  const tarball = (await readdir(pack)).find((name) => name.endsWith('.tgz'))!;
  const installed = join(dir, 'node_modules', 'listing-agent');
  await mkdir(installed, { recursive: true });
  await run('tar', ['xzf', join(pack, tarball), '-C', installed, '--strip-components=1']);
  // As npm installs it in a discord.js 14 bot: one undici at the top, discord.js's, which the
  // package's range accepts and so shares (test/helpers/bot-install.ts).
  await linkBotModules(ROOT, dir, ['discord.js', 'topgg-autoposter']);
  // The row's program runs from the bot's folder, as a bot's file: from bench/helpers/, its
  // `import('listing-agent')` would resolve to this repository itself (a package's self-reference).
  await copyFile(join(ROOT, 'bench', 'helpers', 'embedded-bot.mjs'), join(dir, 'embedded-bot.mjs'));
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'footprint-bot', private: true, type: 'module' }));
  return dir;
}

function sample(dir: string, row: Row, service: BenchService, discord: FakeDiscord): Promise<Sample> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', join(dir, 'embedded-bot.mjs')], {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        PATH: process.env.PATH ?? '',
        BENCH_ROW: row,
        BENCH_V1: service.v1,
        BENCH_V0: service.v0,
        BENCH_TOKEN: service.token,
        BENCH_DISCORD_REST: discord.restUrl,
        BENCH_DISCORD_TOKEN: discord.token,
        BENCH_GUILDS: String(GUILDS),
      },
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('exit', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (code !== 0 || !line) reject(new Error(`${row}: exited ${code}:\n${out.slice(-2000)}`));
      else resolve(JSON.parse(line) as Sample);
    });
  });
}

const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
const m = (bytes: number) => (bytes / MiB).toFixed(1);
const spread = (xs: number[], f: (x: number) => string) => `${f(median(xs))} (${f(sorted(xs)[0]!)}–${f(sorted(xs).at(-1)!)})`;
const plus = (bytes: number) => `${bytes >= 0 ? '+' : ''}${m(bytes)} MiB`;

async function measure(): Promise<string> {
  assertBuilt();
  const machineLine = await machine();
  const dir = await botProject();
  const service = await startBenchService();
  const discord = await startFakeDiscord({ shardCount: 1, guilds: GUILDS });
  try {
    const samples = new Map<Row, Sample[]>(ROWS.map(([row]) => [row, []]));
    for (let round = 0; round < ROUNDS; round += 1) {
      // Alternating: each round runs every row, the order rotated, so drift falls on all rows alike.
      const order = ROWS.map((_, i) => ROWS[(i + round) % ROWS.length]![0]);
      for (const row of order) samples.get(row)!.push(await sample(dir, row, service, discord));
    }
    const of = (row: Row, key: keyof Sample) => samples.get(row)!.map((s) => s[key]);
    const base = { heapUsed: median(of('djs', 'heapUsed')), rss: median(of('djs', 'rss')) };
    const added = (row: Row, key: 'heapUsed' | 'rss') => median(of(row, key)) - base[key];
    const rows = ROWS.map(([row, label]) => [
      label,
      spread(of(row, 'heapUsed'), m),
      row === 'djs' ? '' : plus(added(row, 'heapUsed')),
      spread(of(row, 'rss'), m),
      row === 'djs' ? '' : plus(added(row, 'rss')),
      spread(of(row, 'newSpace'), m),
      row === 'autoposter' || row === 'import' ? spread(of(row, 'importMs'), (x) => x.toFixed(0)) : '',
    ]);
    const importRatio = median(of('import', 'importMs')) / median(of('autoposter', 'importMs'));
    const bytesRow = (what: string, row: Row, key: 'heapUsed' | 'rss', target: number) => [
      what,
      plus(added(row, key)),
      `<= ${m(target)} MiB`,
      verdict(added(row, key) <= target),
    ];
    const verdicts = [
      bytesRow('importing the root: heap added', 'import', 'heapUsed', HEAP_IMPORT_TARGET),
      [
        "importing the root: import time / the auto-poster's",
        `${importRatio.toFixed(2)}x`,
        `<= ${IMPORT_TIME_TARGET}x`,
        verdict(importRatio <= IMPORT_TIME_TARGET),
      ],
      bytesRow('an agent posting stats: heap added', 'stats', 'heapUsed', HEAP_STATS_TARGET),
      bytesRow('an agent posting stats: RSS added', 'stats', 'rss', RSS_STATS_TARGET),
    ];
    const header = ['row', 'heap used MiB', 'heap added', 'RSS MiB', 'RSS added', 'young generation MiB', 'import ms'];
    return [
      '',
      `Inside a discord.js bot that has logged in (fake gateway, ${GUILDS} guilds, 1 shard), ${ROUNDS} alternating rounds, ` +
        `median (min–max). ${machineLine}`,
      '',
      table(header, rows, ['l', 'r', 'r', 'r', 'r', 'r', 'r']),
      '',
      table(['target (median of the rounds, over (d))', 'measured', 'target', ''], verdicts),
      '',
    ].join('\n');
  } finally {
    await discord.gateway.close();
    await discord.rest.close();
    await service.close();
    await rm(dir, { recursive: true, force: true });
  }
}

describe('embedded footprint', () => {
  bench(
    'logged-in discord.js bot: + auto-poster, + listing-agent imported, + stats agent, + full agent',
    async () => {
      console.log(await measure());
    },
    { iterations: 1, warmupIterations: 0, time: 0, warmupTime: 0 },
  );
});
