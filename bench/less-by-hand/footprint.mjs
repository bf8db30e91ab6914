/**
 * What loading each hand-written module costs next to the library that could replace it
 * (docs/decisions/less-by-hand.md): import time, and RSS / heap after two full collections, each
 * in a fresh `node --expose-gc` that has first loaded undici (the daemon always has it: the
 * service client runs on it), measured against the same process loading nothing more.
 *
 * Run after `npm run build`, with the candidates installed without saving them:
 *   npm i --no-save @discordjs/rest jsonc-parser json-source-map proper-lockfile write-file-atomic
 *   node bench/less-by-hand/footprint.mjs [runs=9]
 * Candidates that are not installed are reported as such. The machine is shared: the medians of
 * one run are compared with each other, never with another run's.
 */
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { loadavg } from 'node:os';
import { pathToFileURL } from 'node:url';

const RUNS = Number(process.argv[2] ?? 9);
const require = createRequire(import.meta.url);
const dist = (file) => pathToFileURL(new URL(`../../dist/${file}`, import.meta.url).pathname).href;

/** [item, label, module to import, code run after the import (optional)] */
const VARIANTS = [
  ['1 Discord REST', 'ours: dist/discord/client.js', dist('discord/client.js'), "m.createDiscordRestClient({ token: 'x' })"],
  ['1 Discord REST', '@discordjs/rest (+ new REST())', '@discordjs/rest', "new m.REST({ retries: 0 }).setToken('x')"],
  ['2 JSON position', 'ours: dist/config/json-position.js', dist('config/json-position.js')],
  ['2 JSON position', 'jsonc-parser', 'jsonc-parser'],
  ['2 JSON position', 'json-source-map', 'json-source-map'],
  ['3 state lock', 'ours: dist/store/lock.js', dist('store/lock.js')],
  ['3 state lock', 'proper-lockfile', 'proper-lockfile'],
  ['4 atomic JSON', 'ours: dist/fs/atomic-json.js', dist('fs/atomic-json.js')],
  ['4 atomic JSON', 'write-file-atomic', 'write-file-atomic'],
];

const CHILD = `
const base = await import('undici');
void base;
globalThis.gc(); globalThis.gc();
const before = process.memoryUsage();
const t0 = performance.now();
const target = process.env.TARGET;
const m = target ? await import(target) : undefined;
const t1 = performance.now();
if (target && process.env.AFTER) new Function('m', process.env.AFTER)(m);
globalThis.gc(); globalThis.gc();
const after = process.memoryUsage();
console.log(JSON.stringify({ ms: t1 - t0, rss: after.rss, heap: after.heapUsed, rssGrowth: after.rss - before.rss }));
`;

function measure(target, after) {
  const out = execFileSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', CHILD], {
    cwd: new URL('../..', import.meta.url).pathname,
    env: { ...process.env, TARGET: target ?? '', AFTER: after ?? '' },
    encoding: 'utf8',
  });
  return JSON.parse(out.trim().split('\n').pop());
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const installed = (name) => {
  if (name.startsWith('file:')) return true;
  try {
    require.resolve(name);
    return true;
  } catch {
    return false;
  }
};

console.log(`load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}, node ${process.version}, ${RUNS} runs each (median)`);
const runs = { baseline: [] };
for (const [, label] of VARIANTS) runs[label] = [];
// Interleaved: each round runs every variant once, so load that comes and goes spreads over all.
for (let round = 0; round < RUNS; round++) {
  runs.baseline.push(measure());
  for (const [, label, target, after] of VARIANTS) if (installed(target)) runs[label].push(measure(target, after));
}
const base = { rss: median(runs.baseline.map((r) => r.rss)), heap: median(runs.baseline.map((r) => r.heap)) };
const kb = (bytes) => `${Math.round(bytes / 1024)}`;
console.log(`baseline (node + undici, after gc): RSS ${kb(base.rss)} KiB, heap ${kb(base.heap)} KiB\n`);
console.log('| item | module | import ms | RSS +KiB | heap +KiB |');
console.log('| --- | --- | ---: | ---: | ---: |');
for (const [item, label, target] of VARIANTS) {
  const samples = runs[label];
  if (samples.length === 0) {
    console.log(`| ${item} | ${label} | not installed | | |`);
    continue;
  }
  const ms = median(samples.map((s) => s.ms)).toFixed(1);
  console.log(`| ${item} | ${label} | ${ms} | ${kb(median(samples.map((s) => s.rss)) - base.rss)} | ${kb(median(samples.map((s) => s.heap)) - base.heap)} |`);
}
