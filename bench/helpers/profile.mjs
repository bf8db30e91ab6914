/**
 * Profiles of one phase of a bench process, taken from inside it with `node:inspector` (the
 * protocol `node --cpu-prof` and `--heap-prof` use), so that a profile covers the measured phase
 * only, not start-up and warm-up:
 *
 * - CPU: `startCpuProfile()` ... `stopCpuProfile(path)` writes a `.cpuprofile` (Chrome DevTools
 *   format, the same as `--cpu-prof`), sampled every `BENCH_PROFILE_INTERVAL_US` µs (default 100).
 * - Allocations: `startHeapSampling()` ... `stopHeapSampling(path)` writes a `.heapprofile`
 *   (sampling heap profiler, one sample per 32 KiB allocated on average). Unlike `--heap-prof`,
 *   it keeps objects the garbage collector already freed (`includeObjectsCollectedByMajorGC`
 *   and `...MinorGC`): what is measured is everything allocated, the transient garbage
 *   included, not only what is still alive at exit.
 *
 * `bench/helpers/profile-top.mjs` prints the top entries of either file.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';

let session;

function post(method, params = {}) {
  session ??= (() => {
    const created = new Session();
    created.connect();
    return created;
  })();
  return new Promise((resolve, reject) => session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))));
}

/** Starts the CPU profiler (sampling interval `BENCH_PROFILE_INTERVAL_US`, default 100 µs). */
export async function startCpuProfile() {
  await post('Profiler.enable');
  await post('Profiler.setSamplingInterval', { interval: Number(process.env.BENCH_PROFILE_INTERVAL_US ?? 100) });
  await post('Profiler.start');
}

/** Stops the CPU profiler and writes the profile to `path` (a `.cpuprofile`). */
export async function stopCpuProfile(path) {
  const { profile } = await post('Profiler.stop');
  writeFileSync(path, JSON.stringify(profile));
  await post('Profiler.disable');
}

/**
 * Starts the sampling heap profiler, keeping objects already collected (every allocation counts).
 * `BENCH_HEAP_SURVIVORS=1` leaves out what a scavenge collected: what is left is what outlived the
 * young generation (promoted to the old one, or still alive), the part that grows the old space
 * and the young generation's size (peak RSS) and costs the collector the most.
 */
export async function startHeapSampling() {
  await post('HeapProfiler.enable');
  await post('HeapProfiler.startSampling', {
    samplingInterval: Number(process.env.BENCH_HEAP_INTERVAL_BYTES ?? 32_768),
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: process.env.BENCH_HEAP_SURVIVORS !== '1',
  });
}

/** Stops the sampling heap profiler and writes the profile to `path` (a `.heapprofile`). */
export async function stopHeapSampling(path) {
  const { profile } = await post('HeapProfiler.stopSampling');
  writeFileSync(path, JSON.stringify(profile));
  await post('HeapProfiler.disable');
}
