/**
 * State store throughput: durable writes one at a time, durable writes 100 at once (group commit),
 * and non-durable (batched) writes, on a real directory under the OS temp dir.
 *
 * Run:  npm run bench -- bench/store.bench.ts      (same as: npx vitest bench --run bench/store.bench.ts)
 *
 * vitest prints its own table (iterations per second); at the end this file prints a Markdown table
 * in writes per second, with the whole-file writes (each one fsync of the file and one of the
 * directory) that the writes cost. The state holds ~1,000 keys (~60 KB), about what the vote
 * pipeline keeps for a busy bot; every write rewrites the whole file, so a much bigger state makes
 * each durable write slower and group commit matters more.
 */
import { rmSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bench, describe } from 'vitest';
import { createFileStore, type FileStore } from '../src/store/file.js';

const KEYS = 1_000;
const root = await mkdtemp(join(tmpdir(), 'listing-agent-bench-'));

async function seededStore(name: string): Promise<FileStore> {
  const store = createFileStore({ directory: join(root, name) });
  await store.open();
  for (let i = 0; i < KEYS; i++) void store.set(`votes:done:${i}`, { user: `${100_000_000_000 + i}`, at: 1_700_000_000_000 + i });
  await store.flush();
  return store;
}

const stores = {
  single: await seededStore('single'),
  concurrent: await seededStore('concurrent'),
  batched: await seededStore('batched'),
};

interface Row {
  label: string;
  store: FileStore;
  writesPerCall: number;
  calls: number;
  ms: number;
  fileWritesBefore: number;
}
const rows: Row[] = [];
const finished = new Set<Row>();
let counter = 0;
const vote = () => ({ user: `${200_000_000_000 + counter}`, at: Date.now() });

/** A bench case that also counts, in its measured runs only, what the Markdown table reports. */
function measured(label: string, store: FileStore, writesPerCall: number, fn: () => Promise<unknown>): void {
  const row: Row = { label, store, writesPerCall, calls: 0, ms: 0, fileWritesBefore: 0 };
  rows.push(row);
  bench(
    label,
    async () => {
      const started = performance.now();
      await fn();
      row.ms += performance.now() - started;
      row.calls += 1;
    },
    {
      time: 2_000,
      setup: (_task, mode) => {
        if (mode !== 'run') return;
        row.calls = 0;
        row.ms = 0;
        row.fileWritesBefore = store.stats().writes;
      },
      // tinybench does not await teardown, so the report is synchronous.
      teardown: (_task, mode) => {
        if (mode !== 'run') return;
        finished.add(row);
        if (finished.size === rows.length) report();
      },
    },
  );
}

function report(): void {
  const lines = ['| case | writes/s | mean latency per call | writes per whole-file write (fsync) |', '| --- | ---: | ---: | ---: |'];
  for (const row of rows) {
    const writes = row.calls * row.writesPerCall;
    const perSecond = Math.round((writes / row.ms) * 1000).toLocaleString('en-US');
    const perCall = row.ms / row.calls;
    const latency = perCall < 1 ? `${Math.round(perCall * 1000)} µs` : `${perCall.toFixed(2)} ms`;
    const fileWrites = row.store.stats().writes - row.fileWritesBefore;
    const ratio = fileWrites === 0 ? `all ${writes.toLocaleString('en-US')} (none written yet)` : Math.round(writes / fileWrites).toLocaleString('en-US');
    lines.push(`| ${row.label} | ${perSecond} | ${latency} | ${ratio} |`);
  }
  console.log(`\nFile store, ${KEYS.toLocaleString('en-US')} keys in the state:\n\n${lines.join('\n')}\n`);
  // The worker may exit before anything asynchronous finishes: close() stops the timers at once,
  // and the directory goes synchronously (the final flushes then fail harmlessly).
  for (const store of Object.values(stores)) void store.close().catch(() => undefined);
  rmSync(root, { recursive: true, force: true });
}

describe('file store', () => {
  measured('durable set, one at a time', stores.single, 1, () => stores.single.set(`votes:pending:${counter++ % KEYS}`, vote(), { durable: true }));
  measured('durable set, 100 concurrent', stores.concurrent, 100, () =>
    Promise.all(Array.from({ length: 100 }, () => stores.concurrent.set(`votes:pending:${counter++ % KEYS}`, vote(), { durable: true }))),
  );
  // 1,000 sets, then a turn of the event loop: without it the flush timer never fires during the
  // measurement and the cost of the batched writes would be left out.
  measured('non-durable set (batched, flushDelayMs 1000)', stores.batched, 1_000, async () => {
    for (let i = 0; i < 1_000; i++) void stores.batched.set(`votes:pending:${counter++ % KEYS}`, vote());
    await new Promise((resolve) => setImmediate(resolve));
  });
});
