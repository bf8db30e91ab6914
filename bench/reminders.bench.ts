/**
 * Vote reminders' scheduling cost (issue 26, part 6): 100,000 votes of distinct voters scheduled
 * in pages of 100, through the pure schedule (memory: µs per vote, heap bytes per vote, heap for
 * 100k) and through the file journal (one append and fdatasync per page: µs per vote, journal
 * bytes per vote). The work is bench/helpers/reminders-schedule.mjs on the built dist/, in a child
 * process with --expose-gc so the heap figure is the schedule's own.
 *
 * Run:  npm run build && vitest bench --run bench/reminders.bench.ts
 * Targets: ≤ 1 µs and ≤ 100 B of state per vote; 100,000 scheduled hold ≤ 20 MiB.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { bench, describe } from 'vitest';

const HELPER = fileURLToPath(new URL('./helpers/reminders-schedule.mjs', import.meta.url));

describe('vote reminders: scheduling 100,000 votes', () => {
  bench(
    'schedule and journal',
    () => {
      const out = execFileSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', `import { measure } from ${JSON.stringify(HELPER)}; console.log(JSON.stringify(await measure()));`], { encoding: 'utf8' });
      const r = JSON.parse(out) as { pureUs: number; heapBytes: number; heapPerVote: number; journalUs: number; journalBytesPerVote: number };
      console.table({
        'schedule (memory)': { 'µs per vote': r.pureUs.toFixed(2), 'bytes per vote': r.heapPerVote.toFixed(0), 'heap for 100k (MiB)': (r.heapBytes / 2 ** 20).toFixed(1) },
        'file journal (fsync per page of 100)': { 'µs per vote': r.journalUs.toFixed(2), 'bytes per vote': r.journalBytesPerVote.toFixed(0), 'heap for 100k (MiB)': '' },
      });
    },
    { iterations: 1, warmupIterations: 0 },
  );
});
