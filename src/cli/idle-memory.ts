/**
 * What the daemon (`listing-agent run`) does about the memory its start-up leaves behind, so that
 * every way of starting it (the bin, `node dist/cli/main.js run`, the container, the systemd unit)
 * idles within 8 MiB of its libraries' own (issue 20, target 4; issue 25, part 3). Measured in
 * BENCHMARKS.md, "Footprint" and "Sidecar idle RSS (part 3)". Process-wide V8 settings, hence in
 * src/cli/: the library never changes them in a bot's process.
 */
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import type { Logger } from 'pino';
import type { CliIo } from './io.js';
import { runInNewContext } from 'node:vm';

/**
 * V8's flags and heap spaces are Node's: on Bun (JavaScriptCore) and Deno (a partial `node:v8`)
 * this module does nothing, and on Node a refused call is caught: none of it may stop the daemon.
 */
const ON_NODE = process.versions.bun === undefined && (process.versions as { deno?: string }).deno === undefined;

/**
 * Keeps WebAssembly on V8's baseline compiler (Liftoff), when the CLI owns the process. Call
 * before the first outgoing request.
 *
 * undici parses HTTP/1.1 with llhttp compiled to WebAssembly at the first request. With V8's
 * default tiering, llhttp's parser (one very large function) is then recompiled by TurboFan on
 * background threads: 15 to 35 MiB of compiler memory, malloc'd in glibc's per-thread arenas, of
 * which about 11 MiB stayed resident for the rest of the process's life in one start in four
 * (glibc trims an arena only from its top). Liftoff's code parses the few responses a sidecar gets
 * (a stats post, a votes page a minute) fast enough; the webhook receiver parses with node:http's
 * native llhttp, which this does not touch.
 */
export function keepWasmOnBaselineCompiler(io: Pick<CliIo, 'ownsProcess'>): void {
  // Never in a program that runs the CLI inside it (a test): its V8 is not the CLI's to tune.
  if (!ON_NODE || io.ownsProcess !== true) return;
  try {
    setFlagsFromString('--liftoff-only');
  } catch {
    // A V8 without the flag parses as before: only the memory figure differs.
  }
}

/** The young generation's reserved size (both semi-spaces), bytes. */
function youngGenerationSize(): number {
  if (!ON_NODE) return 0;
  try {
    return getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? 0;
  } catch {
    return 0;
  }
}

/** V8's young generation size when this module was loaded (main.ts imports it first): its floor. */
const YOUNG_GENERATION_AT_START = youngGenerationSize();

let collect: (() => void) | undefined;

/**
 * V8 flags read at each full collection, set for this one only: compact every page (what V8's
 * memory reducer does when it finally runs: old space 18.5 -> 16.7 MiB resident) and flush the
 * bytecode of every function not running (start-up's code: config parsing, schema building; 1.2
 * MiB of heap). A flushed function that runs again is compiled again, lazily, as V8 does anyway.
 */
const THIS_COLLECTION_ONLY = { on: '--compact-on-every-full-gc --stress-flush-code', off: '--no-compact-on-every-full-gc --no-stress-flush-code' };

/** A full collection that compacts and flushes, from `gc` of a context made with --expose-gc on (off again for every later context). */
function collectGarbage(): void {
  // Started with --expose-gc: its own gc(), and the flag left as it was given.
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (!collect && typeof exposed === 'function') collect = () => exposed();
  if (!collect) {
    setFlagsFromString('--expose-gc');
    try {
      const gc = runInNewContext('gc') as unknown;
      if (typeof gc !== 'function') throw new Error('this runtime does not expose gc() with --expose-gc');
      collect = () => (gc as () => void)();
    } finally {
      setFlagsFromString('--no-expose-gc');
    }
  }
  setFlagsFromString(THIS_COLLECTION_ONLY.on);
  try {
    collect();
  } finally {
    setFlagsFromString(THIS_COLLECTION_ONLY.off);
  }
}

/** What one attempt did. */
interface YoungGenerationRelease {
  attempt: number;
  /** Young generation size before and after the collection, bytes. */
  beforeBytes: number;
  afterBytes: number;
  /** How long the collection took, ms. */
  collectionMs: number;
}

interface StartupMemoryOptions {
  /** First attempt this long after the call, ms (start-up's own work done). */
  firstAfterMs: number;
  /** Then again this often until V8 gives the young generation back, ms. */
  everyMs: number;
  /** At most this many collections. */
  attempts: number;
  /** The young generation was given back (or had not grown past its size at start). */
  onReleased(release: YoungGenerationRelease): void;
  /** `attempts` collections and V8 kept it (the process was busy). */
  onKept(release: YoungGenerationRelease): void;
  /** The runtime refused the collection (no attempt follows). */
  onError(error: unknown): void;
}

/**
 * Gives back the young generation that start-up grew, once the daemon is idle. Returns a function
 * that cancels what is still pending (call it on stop). Timers are unref'd.
 *
 * Why: loading the modules and the first requests make V8 grow its young generation from 1 to up
 * to 16 MiB semi-spaces, whose pages stay resident while the daemon idles (about 12 MiB, or 4 MiB
 * with `--max-semi-space-size=2`). V8 shrinks it after a collection that finds the allocation rate
 * low, and compacts the old generation, when its memory reducer runs; an idle daemon, allocating a
 * few KiB a second, waited 8 s to more than a minute for it, depending on the machine's load. One
 * full collection once idle (compacting, flushing start-up's bytecode) does both at a known time:
 * 82 -> 68.5 MiB RSS. V8 shrinks the young generation only if the allocation rate it sampled
 * over the last seconds (at its collections) is low: the first attempt, the first collection after
 * start-up's, often finds start-up's rate still there; the next one, `everyMs` later, then finds
 * the idle rate. A collection takes 20 to 70 ms, at most `attempts` times in the daemon's life.
 */
function releaseStartupMemory(options: StartupMemoryOptions): () => void {
  if (!ON_NODE) return () => {};
  let timer: NodeJS.Timeout | undefined;
  let attempt = 0;
  const tick = () => {
    const beforeBytes = youngGenerationSize();
    // Later attempts only while V8 keeps a young generation grown past its size at start.
    if (attempt > 0 && beforeBytes <= YOUNG_GENERATION_AT_START) return;
    attempt += 1;
    const started = performance.now();
    try {
      collectGarbage();
    } catch (error) {
      options.onError(error);
      return;
    }
    const release = { attempt, beforeBytes, afterBytes: youngGenerationSize(), collectionMs: performance.now() - started };
    if (release.afterBytes < beforeBytes || release.afterBytes <= YOUNG_GENERATION_AT_START) options.onReleased(release);
    else if (attempt >= options.attempts) options.onKept(release);
    else schedule(options.everyMs);
  };
  const schedule = (ms: number) => {
    timer = setTimeout(tick, ms);
    timer.unref();
  };
  schedule(options.firstAfterMs);
  return () => clearTimeout(timer);
}

/** The daemons' schedule: 5 s after the start (its own work done), again every 5 s, 4 at most. */
const DAEMON_SCHEDULE = { firstAfterMs: 5_000, everyMs: 5_000, attempts: 4 } as const;

/**
 * {@link releaseStartupMemory} on the daemons' schedule, each outcome a `debug` line of `logger`
 * (`start-up memory given back`, or why it was kept). For a long-running command once it has
 * started (`run`, `webhooks serve`), when the CLI owns the process; returns the cancel to call on
 * stop.
 */
export function releaseDaemonStartupMemory(io: Pick<CliIo, 'ownsProcess'>, logger: Logger): () => void {
  if (io.ownsProcess !== true) return () => {};
  return releaseStartupMemory({
    ...DAEMON_SCHEDULE,
    onReleased: (r) => logger.debug({ attempt: r.attempt, youngGenerationBytes: [r.beforeBytes, r.afterBytes], collectionMs: Math.round(r.collectionMs) }, 'start-up memory given back'),
    onKept: (r) => logger.debug({ attempts: r.attempt, youngGenerationBytes: r.afterBytes }, 'start-up memory kept: V8 found the allocation rate high at each try'),
    onError: (error) => logger.debug({ err: error }, 'start-up memory kept: this runtime refused the collection'),
  });
}
