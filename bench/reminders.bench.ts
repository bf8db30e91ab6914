/**
 * Vote reminders' schedule alone (issue 26, part 6): 100,000 votes of distinct voters scheduled
 * into the lean table (µs per vote, heap + typed arrays per vote, and for 100k), and through the
 * fallback store (no rewards ledger to ride: a commit of its own per page of 100). The work is
 * bench/helpers/reminders-schedule.mjs on the built dist/, in a child process with --expose-gc so
 * the memory figure is the schedule's own. The agent's default path, and the targets' measure
 * (reminders off vs on in the ingestion bench), is bench/votes.bench.ts.
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
      const r = JSON.parse(out) as { tableUs: number; heldBytes: number; heldPerVote: number; arrayBytesPerVote: number; journalUs: number; journalBytesPerVote: number };
      console.table({
        'table (memory)': { 'µs per vote': r.tableUs.toFixed(2), 'bytes per vote': `${r.heldPerVote.toFixed(0)} (arrays ${r.arrayBytesPerVote.toFixed(0)})`, 'held for 100k (MiB)': (r.heldBytes / 2 ** 20).toFixed(1) },
        'fallback store (a commit per page of 100)': { 'µs per vote': r.journalUs.toFixed(2), 'bytes per vote': `${r.journalBytesPerVote.toFixed(0)} on disk`, 'held for 100k (MiB)': '' },
      });
    },
    { iterations: 1, warmupIterations: 0 },
  );
});
