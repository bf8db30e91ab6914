/**
 * The embedded agent's weight inside a bot (issue 25): what a bot process pays for listing-agent,
 * side by side with topgg-autoposter, in one run, rounds alternating. Each row is a fresh child
 * process (bench/helpers/embedded-bot.mjs, `node --expose-gc`) started from a temporary bot project
 * with the packed package installed (as test/runtimes/packed.ts installs it: `npm pack`, extracted
 * into node_modules/listing-agent, its dependencies and discord.js and topgg-autoposter linked from
 * this repository's node_modules; undici is discord.js's copy, shared, as npm dedupes it). Every
 * row imports discord.js 14 and makes a `Client` first:
 *   (d)  discord.js 14 alone, the baseline;
 *   (p)  + `require('topgg-autoposter')`;
 *   (i)  + `import('listing-agent')`, nothing started;
 *   (s)  + an agent posting stats only (health off), after its first post;
 *   (f)  + stats, votes (cursor polled) and health (listening), after its first post.
 * Information only, outside the rows above, their baseline and the verdicts ("as a logged-in bot"):
 *   (d') (d), its Client's REST having made one request as login does (`GET /gateway/bot`, to a
 *        server on 127.0.0.1 in the child), through discord.js's undici, the copy the agent shares;
 *   (s') (d') + an agent posting stats only, as (s).
 * A bot that has not logged in has not yet made undici's first request (llhttp's wasm, about 7 MiB
 * of RSS), which the agent then pays in (s); a running bot has, so (s') - (d') is what it pays.
 * The emulator runs in this process, not in the bot's. Heap used and RSS after two forced
 * collections; import time of the import alone; CPU (user + system) over the sample interval that
 * follows (BENCH_SAMPLE_MS, default 5 s). Added = the row's median minus (d)'s median; in the
 * information table, (s')'s median minus (d')'s.
 *
 * Run:  npm run bench:embedded   (about 3.5 min; BENCH_ROUNDS, default 5).
 */
import { execFile, spawn } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { bench, describe } from 'vitest';
import { startEmulator, type RunningEmulator } from '../src/emulator/index.js';
import { assertBuilt, machine, ROOT, table } from './helpers/daemon.js';
import { MiB } from './helpers/proc.js';
import { linkBotModules } from '../test/helpers/bot-install.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SAMPLE_MS = Number(process.env.BENCH_SAMPLE_MS ?? 5000);
const run = promisify(execFile);

const ROWS = [
  ['djs', '(d) discord.js 14 alone (a Client, not logged in)'],
  ['autoposter', '(p) + topgg-autoposter imported'],
  ['import', '(i) + listing-agent imported, nothing started'],
  ['stats', '(s) + an agent posting stats only (health off)'],
  ['full', '(f) + an agent with stats, votes and health'],
] as const;
/** Information only ("as a logged-in bot", bench/helpers/embedded-bot.mjs): not in the verdicts. */
const INFO_ROWS = [
  ['djs-rest', "(d') discord.js 14, its REST having made login's first request"],
  ['stats-rest', "(s') + an agent posting stats only (health off)"],
] as const;
const ALL_ROWS = [...ROWS, ...INFO_ROWS];
type Row = (typeof ALL_ROWS)[number][0];

interface Sample {
  heapUsed: number;
  rss: number;
  importMs: number;
  cpuMs: number;
  elapsedMs: number;
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

function sample(dir: string, row: Row, emu: RunningEmulator, token: string): Promise<Sample> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', join(dir, 'embedded-bot.mjs')], {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH ?? '', BENCH_ROW: row, BENCH_SAMPLE_MS: String(SAMPLE_MS), BENCH_V1: emu.urls.v1, BENCH_V0: emu.urls.v0, BENCH_TOKEN: token },
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
const median = (xs: number[]) => sorted(xs)[Math.floor(xs.length / 2)]!;
const m = (bytes: number) => (bytes / MiB).toFixed(1);
const spread = (xs: number[], f: (x: number) => string) => `${f(median(xs))} (${f(sorted(xs)[0]!)}–${f(sorted(xs).at(-1)!)})`;
const plus = (bytes: number) => `${bytes >= 0 ? '+' : ''}${m(bytes)} MiB`;

/**
 * The information table: (d') and (s'), and (s') added over (d'), what a bot that has logged in
 * pays for a stats-only agent. Printed apart from the verdicts, which stay measured against (d).
 */
function informationAsLoggedIn(of: (row: Row, key: keyof Sample) => number[]): string[] {
  const added = (key: 'heapUsed' | 'rss') => plus(median(of('stats-rest', key)) - median(of('djs-rest', key)));
  const rows = INFO_ROWS.map(([row, label]) => [label, spread(of(row, 'heapUsed'), m), spread(of(row, 'rss'), m), spread(of(row, 'cpuMs'), (x) => x.toFixed(0))]);
  return [
    "INFORMATION ONLY, not a verdict: as a logged-in bot (its REST has made a request, so undici is warm). Same rounds, median (min–max).",
    '',
    table(['row', 'heap used MiB', 'RSS MiB', `CPU ms / ${SAMPLE_MS / 1000} s`], rows, ['l', 'r', 'r', 'r']),
    '',
    table(["(s') added over (d')", 'heap added', 'RSS added'], [["agent posting stats, in a logged-in bot", added('heapUsed'), added('rss')]], ['l', 'r', 'r']),
    '',
  ];
}

async function measure(): Promise<string> {
  assertBuilt();
  const header = await machine();
  const dir = await botProject();
  const emu = await startEmulator();
  try {
    const owner = emu.admin.createUser({ username: 'footprint-owner' });
    const token = emu.admin.createProject({ platform: 'discord', type: 'bot', owner_user_id: owner.id, name: 'Footprint Bot' }).project_token;
    const samples = new Map<Row, Sample[]>(ALL_ROWS.map(([row]) => [row, []]));
    for (let round = 0; round < ROUNDS; round += 1) {
      // Alternating: each round runs every row, the order rotated, so drift falls on all rows alike.
      const order = ALL_ROWS.map((_, i) => ALL_ROWS[(i + round) % ALL_ROWS.length]![0]);
      for (const row of order) samples.get(row)!.push(await sample(dir, row, emu, token));
    }
    const of = (row: Row, key: keyof Sample) => samples.get(row)!.map((s) => s[key]);
    const base = { heap: median(of('djs', 'heapUsed')), rss: median(of('djs', 'rss')) };
    const rows = ROWS.map(([row, label]) => [
      label,
      spread(of(row, 'heapUsed'), m),
      row === 'djs' ? '' : plus(median(of(row, 'heapUsed')) - base.heap),
      spread(of(row, 'rss'), m),
      row === 'djs' ? '' : plus(median(of(row, 'rss')) - base.rss),
      row === 'djs' || row === 'autoposter' || row === 'import' ? spread(of(row, 'importMs'), (x) => x.toFixed(0)) : '',
      spread(of(row, 'cpuMs'), (x) => x.toFixed(0)),
    ]);
    const added = (row: Row, key: 'heapUsed' | 'rss') => median(of(row, key)) - (key === 'rss' ? base.rss : base.heap);
    const importRatio = median(of('import', 'importMs')) / median(of('autoposter', 'importMs'));
    const verdict = (ok: boolean) => (ok ? 'met' : '**not met**');
    const verdicts = [
      ['importing the root: heap added', plus(added('import', 'heapUsed')), '≤ 3 MiB', verdict(added('import', 'heapUsed') <= 3 * MiB)],
      ['importing the root: import time / the auto-poster’s', `${importRatio.toFixed(2)}x`, '≤ 2x', verdict(importRatio <= 2)],
      ['agent posting stats: heap added', plus(added('stats', 'heapUsed')), '≤ 4 MiB', verdict(added('stats', 'heapUsed') <= 4 * MiB)],
      ['agent posting stats: RSS added', plus(added('stats', 'rss')), '≤ 8 MiB', verdict(added('stats', 'rss') <= 8 * MiB)],
      ['stats, votes and health: heap added', plus(added('full', 'heapUsed')), '≤ 8 MiB', verdict(added('full', 'heapUsed') <= 8 * MiB)],
    ];
    return [
      '',
      `Embedded footprint, ${ROUNDS} alternating rounds, median (min–max); CPU over ${SAMPLE_MS / 1000} s after the sample. ${header}`,
      '',
      table(['row', 'heap used MiB', 'heap added', 'RSS MiB', 'RSS added', 'import ms', `CPU ms / ${SAMPLE_MS / 1000} s`], rows, ['l', 'r', 'r', 'r', 'r', 'r', 'r']),
      '',
      table(['target (median)', 'measured', 'target', 'verdict'], verdicts),
      '',
      ...informationAsLoggedIn(of),
    ].join('\n');
  } finally {
    await emu.close();
    await rm(dir, { recursive: true, force: true });
  }
}

describe('embedded footprint', () => {
  bench(
    "discord.js bot: + auto-poster, + listing-agent imported, + stats agent, + full agent; (d') and (s') as information",
    async () => {
      console.log(await measure());
    },
    { iterations: 1, warmupIterations: 0, time: 0, warmupTime: 0 },
  );
});
