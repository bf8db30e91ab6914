/**
 * Where the paired pages' CPU goes (votes-ingest.mjs `--paired` with `BENCH_PAIRED_DETAIL=<file>`):
 * per side (0 reminders off, 1 on), the CPU time of the main thread and of every other thread
 * (V8's GC helpers and libuv's pool: `/proc/self/task/<tid>/schedstat`, ns), and the garbage
 * collections whose start falls in that side's pages (`PerformanceObserver` 'gc': kind 1
 * scavenge, 2 mark-compact, 4 incremental marking, 8 weak callbacks), and each measured page's
 * window on the monotonic clock of `.cpuprofile` timestamps (µs), so that
 * `node bench/helpers/paired-split.mjs <cpuprofile> <file>` can split a profile by side.
 * Linux only (schedstat); reading it costs the same on both sides.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { PerformanceObserver } from 'node:perf_hooks';

/** CPU ns of each thread of this process, the main thread as `main`, every other thread as `other`. */
function threadNs() {
  let main = 0;
  let other = 0;
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const ns = Number(readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
      if (tid === String(process.pid)) main += ns;
      else other += ns;
    } catch {
      // A thread that ended between the listing and the read.
    }
  }
  return [main, other];
}

/** Starts recording; `page(side, run)` measures one page; `finish(votesPerSide)` writes the file. */
export function pairedDetail(path) {
  const gcs = [];
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) gcs.push([entry.startTime, entry.detail?.kind ?? entry.kind, entry.duration]);
  });
  observer.observe({ entryTypes: ['gc'] });
  const windows = [];
  const threads = [
    [0, 0],
    [0, 0],
  ];
  return {
    async page(side, run) {
      const before = threadNs();
      const startedMs = performance.now();
      const startedUs = Number(process.hrtime.bigint() / 1000n);
      await run();
      const endedUs = Number(process.hrtime.bigint() / 1000n);
      const endedMs = performance.now();
      const after = threadNs();
      threads[side][0] += after[0] - before[0];
      threads[side][1] += after[1] - before[1];
      windows.push({ side, startedMs, endedMs, startedUs, endedUs });
    },
    async finish(votesPerSide) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      observer.disconnect();
      const gc = [{}, {}];
      for (const [start, kind, duration] of gcs) {
        const w = windows.find((x) => start >= x.startedMs && start <= x.endedMs);
        if (w === undefined) continue;
        const entry = (gc[w.side][`kind ${kind}`] ??= { count: 0, ms: 0 });
        entry.count += 1;
        entry.ms += duration;
      }
      const perVote = (ns) => ns / 1000 / votesPerSide;
      const sides = [0, 1].map((side) => ({ mainUsPerVote: perVote(threads[side][0]), otherThreadsUsPerVote: perVote(threads[side][1]), gc: gc[side] }));
      writeFileSync(path, JSON.stringify({ sides, windows: windows.map((w) => [w.startedUs, w.endedUs, w.side]) }));
      return sides;
    },
  };
}
