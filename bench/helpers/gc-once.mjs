// Trial preload for bench/idle-rss.bench.ts (`gc-once`, not kept: BENCHMARKS.md, "Footprint"):
// node --expose-gc --import this file: one full collection BENCH_GC_AFTER_MS (default 5 s) after start.
const after = Number(process.env.BENCH_GC_AFTER_MS ?? 5000);
setTimeout(() => globalThis.gc(), after).unref();
