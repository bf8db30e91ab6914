/**
 * Issue 26's paired figure, run several times (bench/votes.bench.ts runs it once): the paired pages
 * of votes-ingest.mjs (`--paired`: reminders off and on, page by page, in one process), each run
 * a fresh process, alternating between builds when `BENCH_BASE_DIST` names another build's dist/
 * (a checkout of main, built), so both see the same load. Prints per run and then min / median /
 * max of the runs' medians (µs per vote added, CPU and wall), with the 1-minute load average.
 *
 *   node bench/helpers/reminders-paired.mjs [runs, default 5]
 *   BENCH_BASE_DIST=../main-checkout/dist node bench/helpers/reminders-paired.mjs 6
 */
import { execFileSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';

const HELPER = fileURLToPath(new URL('./votes-ingest.mjs', import.meta.url));
const runs = Number(process.argv[2] ?? 5);
const builds = [['this', undefined], ...(process.env.BENCH_BASE_DIST ? [['base', process.env.BENCH_BASE_DIST]] : [])];

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};
const summary = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return `${sorted[0].toFixed(2)} / ${median(sorted).toFixed(2)} / ${sorted.at(-1).toFixed(2)}`;
};

const results = Object.fromEntries(builds.map(([name]) => [name, { cpu: [], wall: [], off: [] }]));
for (let run = 0; run < runs; run++) {
  // The order alternates, so that neither build always goes first.
  for (const [name, dist] of run % 2 === 0 ? builds : [...builds].reverse()) {
    const load = loadavg()[0];
    const env = { PATH: process.env.PATH ?? '', NODE_ENV: 'production', ...(dist ? { BENCH_DIST: dist } : {}) };
    const out = execFileSync(process.execPath, ['--expose-gc', HELPER, '--paired'], { encoding: 'utf8', env, maxBuffer: 64 * 2 ** 20 });
    const r = JSON.parse(out);
    const cpu = median(r.cpuAdded);
    const wall = median(r.wallAdded);
    const off = median(r.wallOff);
    results[name].cpu.push(cpu);
    results[name].wall.push(wall);
    results[name].off.push(off);
    console.log(`run ${run + 1} ${name}: load ${load.toFixed(2)}, added per vote CPU ${cpu.toFixed(2)} µs, wall ${wall.toFixed(2)} µs (off ${off.toFixed(2)} µs wall)`);
  }
}
for (const [name] of builds) {
  const r = results[name];
  console.log(`${name} (${runs} runs, min / median / max): CPU added ${summary(r.cpu)} µs, wall added ${summary(r.wall)} µs, off wall ${summary(r.off)} µs`);
}
console.log(`load at the end: ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
