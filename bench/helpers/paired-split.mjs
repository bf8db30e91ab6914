/**
 * A CPU profile of the paired pages split by side (reminders off / on): each sample falls in a
 * page's window (from votes-ingest.mjs `--paired` with `BENCH_PAIRED_DETAIL`, bench/helpers/paired-detail.mjs)
 * or in none (between pages: left out). Prints, per function, the self time per vote added by the
 * "on" side (on minus off) and the "off" side's own, the largest first, and the totals.
 *
 *   BENCH_PAIRED_DETAIL=/tmp/d.json BENCH_CPU_PROFILE=/tmp/p.cpuprofile node --expose-gc bench/helpers/votes-ingest.mjs --paired
 *   node bench/helpers/paired-split.mjs /tmp/p.cpuprofile /tmp/d.json [--top 30] [--per 90000]
 */
import { readFileSync } from 'node:fs';

const [profilePath, detailPath] = process.argv.slice(2);
const option = (name, fallback) => {
  const at = process.argv.indexOf(name);
  return at < 0 ? fallback : Number(process.argv[at + 1]);
};
const top = option('--top', 30);
const per = option('--per', 90_000);
const profile = JSON.parse(readFileSync(profilePath, 'utf8'));
const windows = JSON.parse(readFileSync(detailPath, 'utf8')).windows;
const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
const bySide = [new Map(), new Map()];
const totals = [0, 0];
let time = profile.startTime;
let w = 0;
// Sample i was taken at startTime + the sum of the deltas up to it; each counts for the interval before it.
for (let i = 0; i < profile.samples.length; i++) {
  const delta = profile.timeDeltas[i];
  time += delta;
  while (w < windows.length && windows[w][1] < time) w++;
  if (w >= windows.length) break;
  if (time < windows[w][0]) continue;
  const side = windows[w][2];
  const { functionName, url, lineNumber } = nodes.get(profile.samples[i]).callFrame;
  const key = `${functionName || '(anonymous)'} ${url.replace(/.*\/(dist|bench)\//, '$1/')}:${lineNumber + 1}`;
  bySide[side].set(key, (bySide[side].get(key) ?? 0) + delta);
  totals[side] += delta;
}
const us = (value) => (value / per).toFixed(3);
console.log(`sampled time per vote in the pages: off ${us(totals[0])} µs, on ${us(totals[1])} µs (idle included), added ${us(totals[1] - totals[0])} µs`);
const rows = [...new Set([...bySide[0].keys(), ...bySide[1].keys()])].map((key) => [key, (bySide[1].get(key) ?? 0) - (bySide[0].get(key) ?? 0), bySide[0].get(key) ?? 0]);
rows.sort((a, b) => b[1] - a[1]);
console.log('| added per vote (µs) | off per vote (µs) | function |\n| ---: | ---: | --- |');
for (const [key, added, off] of rows.slice(0, top)) console.log(`| ${us(added)} | ${us(off)} | ${key} |`);
