/**
 * Prints the top entries of profiles as Markdown tables (bench/PROFILE.md):
 *
 *   node bench/helpers/profile-top.mjs <file.cpuprofile>... [--per <n>] [--top 10]
 *   node bench/helpers/profile-top.mjs <file.heapprofile>... [--per <n>] [--top 10]
 *
 * Several files of one kind are added up (on a shared machine one profile is noisy: a thread
 * preempted in the middle of a function charges that function with the wait).
 *
 * CPU: self time per function (name, file:line), in % of the busy (not idle) time and, with
 * `--per n` (the deliveries or votes the profiles cover; default: the sum of the `handled` of
 * each `<same name>.json` beside them), in µs per unit; then self time per file. Heap: bytes
 * allocated per site (the sampling profiler's estimate), in % and per unit; then per file.
 *
 * `--charge`: for CPU, a third table charges each sample to the innermost function of the agent's
 * own code on its stack (a file under dist/), so that the Node internals a function of ours calls
 * (JSON, Map, fs, AbortController, crypto) count as its cost; samples with none of our code on
 * the stack (HTTP parsing, the garbage collector, the event loop) keep their own function.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const files = args.filter((arg, index) => !arg.startsWith('--') && !args[index - 1]?.startsWith('--'));
const file = files.join(' + ');
const option = (name, fallback) => {
  const at = args.indexOf(`--${name}`);
  return at >= 0 ? Number(args[at + 1]) : fallback;
};
if (files.length === 0) {
  console.error('usage: node bench/helpers/profile-top.mjs <file.cpuprofile|file.heapprofile> [--per <n>] [--top <n>]');
  process.exit(2);
}
const top = option('top', 10);
const sidecars = files.map((name) => name.replace(/\.(cpu|heap)profile$/, '.json'));
const per = option('per', sidecars.every((name) => existsSync(name)) ? sidecars.reduce((sum, name) => sum + JSON.parse(readFileSync(name, 'utf8')).handled, 0) : undefined);

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** `dist/votes/pipeline.js:123`, `node:internal/http/server:456`, `(native)`: relative to the repository. */
function where(frame) {
  let url = frame.url || '';
  if (url.startsWith('file://')) url = fileURLToPath(url);
  if (url.startsWith(ROOT)) url = url.slice(ROOT.length);
  if (url === '') return '(native)';
  return `${url}:${frame.lineNumber + 1}`;
}

const fileOf = (frame) => where(frame).replace(/:\d+$/, '');
const name = (frame) => frame.functionName || '(anonymous)';

function rows(totals, grand, unit, format) {
  return [...totals]
    .sort((x, y) => y[1] - x[1])
    .slice(0, top)
    .map(([key, value], index) => `| ${index + 1} | ${((value / grand) * 100).toFixed(1)}% | ${per ? format(value / per) : ''} | ${key} |`);
}

function cpu(profiles) {
  const byFunction = new Map();
  const byFile = new Map();
  const charged = new Map();
  let idle = 0;
  let durationUs = 0;
  let samples = 0;
  for (const profile of profiles) {
    const parents = new Map();
    for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);
    durationUs += profile.endTime - profile.startTime;
    samples += profile.samples.length;
    const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
    // Self time per node from the samples and their time deltas (the time until the next sample).
    const selfUs = new Map();
    for (let i = 0; i < profile.samples.length; i++) {
      const delta = profile.timeDeltas[i + 1] ?? 0;
      selfUs.set(profile.samples[i], (selfUs.get(profile.samples[i]) ?? 0) + delta);
    }
    for (const [id, us] of selfUs) {
      const frame = nodes.get(id).callFrame;
      if (frame.functionName === '(idle)') {
        idle += us;
        continue;
      }
      const key = `${name(frame)} | ${where(frame)}`;
      byFunction.set(key, (byFunction.get(key) ?? 0) + us);
      const fileKey = frame.url ? fileOf(frame) : name(frame);
      byFile.set(fileKey, (byFile.get(fileKey) ?? 0) + us);
      let owner = frame;
      for (let at = id; at !== undefined; at = parents.get(at)) {
        const candidate = nodes.get(at).callFrame;
        if (where(candidate).startsWith('dist/')) {
          owner = candidate;
          break;
        }
      }
      const ownerKey = `${name(owner)} | ${where(owner)}`;
      charged.set(ownerKey, (charged.get(ownerKey) ?? 0) + us);
    }
  }
  const busy = durationUs - idle;
  const us = (value) => `${value.toFixed(2)} µs`;
  console.log(`CPU profile ${file}: ${(durationUs / 1e6).toFixed(2)} s, ${samples} samples, busy ${((busy / durationUs) * 100).toFixed(1)}% (idle ${(idle / 1e6).toFixed(2)} s)${per ? `, ${per} units: ${(busy / per).toFixed(1)} µs busy per unit` : ''}. % of busy time.\n`);
  console.log('| # | self | self per unit | function | file:line |');
  console.log('| ---: | ---: | ---: | --- | --- |');
  for (const row of rows(byFunction, busy, 'us', us)) console.log(row);
  console.log('\n| # | self | self per unit | file (or category) |');
  console.log('| ---: | ---: | ---: | --- |');
  for (const row of rows(byFile, busy, 'us', us)) console.log(row);
  if (!args.includes('--charge')) return;
  console.log('\n| # | charged | charged per unit | innermost function of ours (else the function itself) | file:line |');
  console.log('| ---: | ---: | ---: | --- | --- |');
  for (const row of rows(charged, busy, 'us', us)) console.log(row);
}

function heap(profiles) {
  const bySite = new Map();
  const byFile = new Map();
  let total = 0;
  const walk = (node) => {
    if (node.selfSize > 0) {
      const frame = node.callFrame;
      const key = `${name(frame)} | ${where(frame)}`;
      bySite.set(key, (bySite.get(key) ?? 0) + node.selfSize);
      const fileKey = frame.url ? fileOf(frame) : name(frame);
      byFile.set(fileKey, (byFile.get(fileKey) ?? 0) + node.selfSize);
      total += node.selfSize;
    }
    for (const child of node.children) walk(child);
  };
  for (const profile of profiles) walk(profile.head);
  const bytes = (value) => `${Math.round(value).toLocaleString('en-US')} B`;
  console.log(`Heap profile ${file}: ${(total / 2 ** 20).toFixed(1)} MiB allocated (sampled estimate)${per ? `, ${per} units: ${bytes(total / per)} per unit` : ''}.\n`);
  console.log('| # | bytes | bytes per unit | function | file:line |');
  console.log('| ---: | ---: | ---: | --- | --- |');
  for (const row of rows(bySite, total, 'B', bytes)) console.log(row);
  console.log('\n| # | bytes | bytes per unit | file (or category) |');
  console.log('| ---: | ---: | ---: | --- |');
  for (const row of rows(byFile, total, 'B', bytes)) console.log(row);
}

const profiles = files.map((name) => JSON.parse(readFileSync(name, 'utf8')));
if (profiles[0].head) heap(profiles);
else cpu(profiles);
