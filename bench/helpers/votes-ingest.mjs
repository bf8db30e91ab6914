/**
 * The vote ingestion of bench/votes.bench.ts, from the built dist/: 100,000 votes in pages of 100
 * (each page awaited, as the poller hands them over: each costs at least one durable journal
 * append) through the file ledger to one in-process hook (a no-op async listener); then the clock
 * moves past the votes' expiry plus `keepKeysFor`, the ledger is compacted and the state directory
 * measured.
 *
 * `runIngestion()` runs it in the calling process. Run as a script (`node --expose-gc
 * bench/helpers/votes-ingest.mjs`), it runs it in a process of its own and prints the result as
 * one JSON line, with VmHWM (the process's peak RSS over its whole life) from /proc/self/status.
 * With `--reminders` (`runIngestion({ reminders: true })`), vote reminders are on, wired as the
 * votes capability wires them on the file store (`votes.reminders.enabled`: the schedule rides
 * the ledger, the reminder pipeline and its own ledger started beside it); the result then also
 * has the heap after a GC with everything still held, and the reminders' own cost measured alone
 * (the ledger's companion called for the same 100,000 votes, `hookUsPerVote`).
 * `BENCH_HEAP_PROFILE=<file.heapprofile>` and `BENCH_CPU_PROFILE=<file.cpuprofile>` profile the
 * ingestion, from the first page until the pipeline is idle (bench/PROFILE.md); with `--paired`,
 * `BENCH_CPU_PROFILE` profiles the measured pairs (after the warm-up tenth).
 */
import { readFileSync, rmSync } from 'node:fs';
import { mkdtemp, open, readdir, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { pairedDetail } from './paired-detail.mjs';
import { startCpuProfile, startHeapSampling, stopCpuProfile, stopHeapSampling } from './profile.mjs';

// `BENCH_DIST`: the built agent to load (default this repository's dist/), to compare two builds.
const dist = process.env.BENCH_DIST ? pathToFileURL(`${process.env.BENCH_DIST.replace(/\/$/, '')}/`) : new URL('../../dist/', import.meta.url);
const { silentLogger } = await import(new URL('log/agent-logger.js', dist).href);
const { createFileStore } = await import(new URL('store/file.js', dist).href);
const { createFileVoteLedger } = await import(new URL('votes/ledger-file.js', dist).href);
const { createVotePipeline } = await import(new URL('votes/pipeline.js', dist).href);
const { createInProcessHook } = await import(new URL('votes/hooks/in-process.js', dist).href);
const { configSchema } = await import(new URL('config/schema.js', dist).href);
const { createAgentMetrics } = await import(new URL('runtime/metrics.js', dist).href);
const { reminderStoreFor, startReminders } = await import(new URL('votes/reminders/configured.js', dist).href);
const { voteKey } = await import(new URL('contract/vote-key.js', dist).href);
const { Registry } = await import('prom-client');

export const VOTES = 100_000;
/** Optional profiles of the ingestion (first page to idle), see bench/PROFILE.md: file paths. */
const HEAP_PROFILE = process.env.BENCH_HEAP_PROFILE;
const CPU_PROFILE = process.env.BENCH_CPU_PROFILE;
// `--paired` only: per side, main-thread and other threads' CPU, the GCs, and the pages' windows (bench/helpers/paired-detail.mjs).
const PAIRED_DETAIL = process.env.BENCH_PAIRED_DETAIL;
export const PAGE = 100;
const HOUR = 3_600_000;
const KEEP_KEYS_FOR_MS = HOUR; // the config's default votes.keepKeysFor

async function directoryBytes(dir) {
  const names = await readdir(dir);
  const sizes = await Promise.all(names.map(async (name) => (await stat(join(dir, name))).size));
  return sizes.reduce((sum, size) => sum + size, 0);
}

/**
 * Page `index` of the stream: 100 votes of distinct users, spread over the last 12 h, each with
 * its key made as the poller makes it (`voteKey`, from the build measured). The user ID is made
 * with `toFixed`: a string parsed from the service's JSON is a young one, where `String(n)` would
 * make it in V8's old generation (its number-to-string cache), garbage the poller does not make.
 */
function page(index, start) {
  const votes = [];
  for (let i = 0; i < PAGE; i++) {
    const n = index * PAGE + i;
    const userId = (300_000_000_000_000 + n).toFixed(0);
    const created = start + Math.floor((n * 12 * HOUR) / VOTES);
    votes.push({
      key: voteKey(userId, created),
      userId,
      platformId: String(100_000_000_000_000_000n + BigInt(n)),
      projectId: '803190510032756736',
      weight: 1,
      createdAt: new Date(created).toISOString(),
      expiresAt: new Date(created + 12 * HOUR).toISOString(),
      road: 'poll',
    });
  }
  return votes;
}

/**
 * Bytes of the journal by record kind (`t` of each line: `p` pending, `c` complete, ...), newlines
 * included. Read through one 64 KiB buffer, each line's first 16 bytes copied into one more, so
 * that it allocates nothing per byte or line (but the kind's name) and adds nothing to the peak
 * RSS measured.
 */
async function journalBytesByKind(path) {
  const kinds = {};
  const handle = await open(path, 'r');
  const buffer = Buffer.alloc(65_536);
  // `{"t":"p",...}` (objects: version 1, and the header and snapshot records) or `["p",...]` (version 2).
  const prefixes = [Buffer.from('{"t":"'), Buffer.from('["')];
  const head = Buffer.alloc(16); // the first bytes of the current line
  let headLength = 0;
  let lineBytes = 0;
  const kindOfLine = () => {
    for (const prefix of prefixes) {
      if (headLength <= prefix.length || head.compare(prefix, 0, prefix.length, 0, prefix.length) !== 0) continue;
      for (let close = prefix.length; close < headLength; close++) if (head[close] === 0x22) return head.toString('latin1', prefix.length, close);
    }
    return '?';
  };
  try {
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) break;
      for (let i = 0; i < bytesRead; i++) {
        const byte = buffer[i];
        if (headLength < head.length) head[headLength++] = byte;
        lineBytes += 1;
        if (byte === 0x0a) {
          const kind = kindOfLine();
          kinds[kind] = (kinds[kind] ?? 0) + lineBytes;
          lineBytes = 0;
          headLength = 0;
        }
      }
    }
  } finally {
    await handle.close();
  }
  return kinds;
}

/** VmHWM of this process, bytes (Linux), or undefined. */
export function ownPeakRss() {
  try {
    const match = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8'));
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

const gcTwice = () => {
  // Two: the second collects what the first's finalizers freed.
  globalThis.gc?.();
  globalThis.gc?.();
};

/** The reminders as the votes capability starts them on the file store (the ledger opened already). */
async function remindersBeside(config, store, now, root) {
  const context = { config, logger: silentLogger, metrics: createAgentMetrics(new Registry()), now, emit: () => undefined, reportError: () => undefined, listeners: () => [] };
  return startReminders(context, { kind: 'file', store, directory: root });
}

/** The reminders' own cost alone: a fresh store's `recorded` (what the ledger calls per new vote) over every vote, µs per vote. */
function hookCost(config, now, start) {
  const pages = Array.from({ length: VOTES / PAGE }, (_, index) => page(index, start));
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 3; round++) {
    const store = reminderStoreFor(config, now);
    const started = performance.now();
    for (const votes of pages) {
      for (const vote of votes) store.recorded(vote);
      // Reading the table puts the page's votes in (the ledger's write would be under way meanwhile).
      void store.table;
    }
    best = Math.min(best, performance.now() - started);
    if (store.table.size !== VOTES) throw new Error(`expected ${VOTES} reminders, got ${store.table.size}`);
  }
  return (best * 1000) / VOTES;
}

/** The bench's start (votes are created from it over 12 h) and its clock, a minute before the first vote expires. */
const START = Date.UTC(2024, 4, 1);
// Every vote gets its reminder, and none comes due while the clock stands still (the reminders'
// one timer waits that minute).
const CLOCK = START + 12 * HOUR - 60_000;

/**
 * The file store, the file ledger and the vote pipeline in `root`, with one in-process hook
 * counting its calls; with `reminders`, vote reminders as the votes capability wires them.
 */
async function setUp(root, reminders, now) {
  // The ledger lives in the directory the agent's file store locks (state.lock), as in the agent.
  const store = createFileStore({ directory: root, now });
  await store.open();
  const config = configSchema.parse({ service: { token: 'a.b.c' }, state: { directory: root }, votes: { reminders: { enabled: reminders } } });
  const reminderStore = reminders ? reminderStoreFor(config, now) : undefined;
  const ledger = createFileVoteLedger({ directory: root, keepKeysForMs: KEEP_KEYS_FOR_MS, now, ...(reminderStore ? { companion: reminderStore } : {}) });
  const counted = { hookCalls: 0 };
  // The real in-process hook, with one async listener, as an embedded bot's agent.on('vote') would be.
  const inProcess = createInProcessHook({
    listeners: () => [
      async () => {
        counted.hookCalls += 1;
      },
    ],
  });
  const pipeline = createVotePipeline({ ledger, hooks: [inProcess], logger: silentLogger, now });
  await pipeline.start();
  const running = reminderStore ? await remindersBeside(config, reminderStore, now, root) : undefined;
  const close = async (at) => {
    await pipeline.stop(at + 5_000);
    await running?.stop(at + 5_000);
    await ledger.close();
    await store.close();
  };
  return { config, reminderStore, ledger, pipeline, counted, close };
}

/**
 * Reminders off against on in one process, page by page: two set-ups (each its own directory)
 * take the same pages in turn (which goes first alternates), each page ingested and its hooks
 * finished before the next; the CPU time (`process.cpuUsage`, every thread) and wall time of each
 * page are paired, so load that comes and goes on a shared machine falls on both sides of a pair.
 */
export async function runPaired() {
  const roots = [await mkdtemp(join(tmpdir(), 'listing-agent-votes-off-')), await mkdtemp(join(tmpdir(), 'listing-agent-votes-on-'))];
  try {
    const now = () => CLOCK;
    const sides = [await setUp(roots[0], false, now), await setUp(roots[1], true, now)];
    const cpu = [[], []];
    const wall = [[], []];
    const pages = VOTES / PAGE;
    // The first tenth warms both sides up (the JIT); the rest is measured (and profiled, if asked).
    const from = Math.floor(pages / 10);
    let detail;
    for (let index = 0; index < pages; index++) {
      if (index === from && CPU_PROFILE) await startCpuProfile();
      if (index === from && PAIRED_DETAIL) detail = pairedDetail(PAIRED_DETAIL);
      const votes = page(index, START);
      for (const side of index % 2 === 0 ? [0, 1] : [1, 0]) {
        const { pipeline } = sides[side];
        const before = process.cpuUsage();
        const started = performance.now();
        if (detail) {
          await detail.page(side, async () => {
            await pipeline.ingest(votes, 'poll');
            await pipeline.idle();
          });
        } else {
          await pipeline.ingest(votes, 'poll');
          await pipeline.idle();
        }
        wall[side].push((performance.now() - started) * 1000);
        const used = process.cpuUsage(before);
        cpu[side].push(used.user + used.system);
      }
    }
    if (CPU_PROFILE) await stopCpuProfile(CPU_PROFILE);
    if (detail) process.stderr.write(`${JSON.stringify(await detail.finish((pages - from) * PAGE))}\n`);
    const scheduled = sides[1].reminderStore.table.size;
    for (const side of sides) await side.close(CLOCK);
    if (sides.some((side) => side.counted.hookCalls !== VOTES) || scheduled !== VOTES) throw new Error(`expected ${VOTES} hook calls on both sides and ${VOTES} reminders, got ${sides.map((side) => side.counted.hookCalls)} and ${scheduled}`);
    const perVote = (values) => values.slice(from).map((value) => value / PAGE);
    const diff = (values) => values[1].slice(from).map((value, i) => (value - values[0][from + i]) / PAGE);
    return { pages: pages - from, cpuOff: perVote(cpu[0]), cpuOn: perVote(cpu[1]), cpuAdded: diff(cpu), wallOff: perVote(wall[0]), wallOn: perVote(wall[1]), wallAdded: diff(wall) };
  } finally {
    for (const root of roots) rmSync(root, { recursive: true, force: true });
  }
}

/** Runs the ingestion in this process; RSS sampled every 5 ms and at every page. `reminders`: with vote reminders on. */
export async function runIngestion(options = {}) {
  const root = await mkdtemp(join(tmpdir(), 'listing-agent-votes-bench-'));
  try {
    const start = START;
    let clock = CLOCK;
    const now = () => clock;
    const { config, reminderStore, ledger, pipeline, counted, close } = await setUp(root, options.reminders === true, now);

    globalThis.gc?.();
    if (HEAP_PROFILE) await startHeapSampling();
    if (CPU_PROFILE) await startCpuProfile();
    const baseline = process.memoryUsage().rss;
    let peak = baseline;
    // `memoryUsage.rss()`, not `memoryUsage()`, whose heap statistics cost 1.3 µs per vote at one call per page.
    const sample = () => (peak = Math.max(peak, process.memoryUsage.rss()));
    const sampler = setInterval(sample, 5);
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    let accepted = 0;
    for (let index = 0; index < VOTES / PAGE; index++) {
      accepted += (await pipeline.ingest(page(index, start), 'poll')).accepted.length;
      sample();
    }
    const ingestedMs = performance.now() - started;
    await pipeline.idle();
    const elapsedMs = performance.now() - started;
    const cpu = process.cpuUsage(cpuBefore);
    if (CPU_PROFILE) await stopCpuProfile(CPU_PROFILE);
    if (HEAP_PROFILE) await stopHeapSampling(HEAP_PROFILE);
    sample();
    clearInterval(sampler);
    const heapUsed = process.memoryUsage().heapUsed;
    // Everything still held (ledger, pipeline, reminders): the difference with reminders off is their
    // state. Typed arrays live outside the V8 heap (arrayBuffers), and are counted: the sweeper that
    // frees the ones left by growth runs after the GC, hence the turns of the event loop.
    for (let i = 0; i < 4; i++) {
      gcTwice();
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const { heapUsed: heapAfterGc, arrayBuffers: arrayBuffersAfterGc } = process.memoryUsage();
    const scheduled = reminderStore?.table.size ?? 0;
    // Read before the measure below allocates its 100,000 votes again.
    const peakBeforeHookCost = ownPeakRss();
    const hookUsPerVote = reminderStore ? hookCost(config, now, start) : undefined;
    const grown = ledger.stats();
    const directoryBefore = await directoryBytes(root);
    const journalByKind = await journalBytesByKind(ledger.path);

    clock = start + 12 * HOUR + 12 * HOUR + KEEP_KEYS_FOR_MS + 60_000; // every vote expired, plus the slack
    const compactStarted = performance.now();
    await ledger.compact(clock);
    const compactMs = performance.now() - compactStarted;
    const after = ledger.stats();
    const directoryAfter = await directoryBytes(root);
    await close(clock);

    if (accepted !== VOTES || counted.hookCalls !== VOTES) throw new Error(`expected ${VOTES} votes and hook calls, got ${accepted} and ${counted.hookCalls}`);
    if (options.reminders && scheduled !== VOTES) throw new Error(`expected ${VOTES} reminders scheduled, got ${scheduled}`);
    return {
      reminders: options.reminders === true,
      scheduled,
      hookUsPerVote,
      peakBeforeHookCost,
      heapAfterGc,
      arrayBuffersAfterGc,
      cpuUsPerVote: (cpu.user + cpu.system) / VOTES,
      votesPerSecond: (VOTES / elapsedMs) * 1000,
      ingestOnlyPerSecond: (VOTES / ingestedMs) * 1000,
      elapsedMs,
      commits: grown.commits,
      journalBytes: grown.bytes,
      journalByKind,
      keys: grown.keys,
      baselineRss: baseline,
      peakRss: peak,
      heapUsedAtEnd: heapUsed,
      directoryBefore,
      directoryAfter,
      keysAfter: after.keys,
      compactMs,
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

const isMain = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (isMain && process.argv.includes('--paired')) {
  process.stdout.write(`${JSON.stringify(await runPaired())}\n`);
} else if (isMain) {
  const result = await runIngestion({ reminders: process.argv.includes('--reminders') });
  process.stdout.write(`${JSON.stringify({ ...result, vmHwm: ownPeakRss(), node: process.version })}\n`);
}
