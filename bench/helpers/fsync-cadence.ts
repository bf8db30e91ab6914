/**
 * The disk alone, for bench/latency.bench.ts: what one group commit's fdatasync costs in the
 * directory the servers keep their state in, at the cadence of 1,000 votes a second. Every
 * `intervalMs` a line of `lineBytes` is due; the lines due while no commit is in flight go in one
 * write and one fdatasync (on libuv's thread pool, as the journal's and the minimal server's
 * commits do). Per commit: the fdatasync's duration, from the call to its completion.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface FsyncCadenceResult {
  /** Each commit's fdatasync, ms. */
  datasyncMs: number[];
  /** Lines written (one per slot). */
  lines: number;
}

export async function fsyncCadence(options: {
  seconds: number;
  intervalMs: number;
  lineBytes: number;
  /** Where the temporary directory is made (default the OS temp directory, as the servers'). */
  parent?: string;
}): Promise<FsyncCadenceResult> {
  const directory = mkdtempSync(join(options.parent ?? tmpdir(), 'listing-agent-fsync-bench-'));
  const handle = await open(join(directory, 'lines.jsonl'), 'a');
  const line = `${'x'.repeat(options.lineBytes - 1)}\n`;
  const datasyncMs: number[] = [];
  const startNs = process.hrtime.bigint();
  const endNs = startNs + BigInt(Math.round(options.seconds * 1e9));
  const slotNs = BigInt(Math.round(options.intervalMs * 1e6));
  let written = 0;
  try {
    for (;;) {
      const now = process.hrtime.bigint();
      const due = Number((now < endNs ? now : endNs) - startNs) / Number(slotNs);
      const lines = Math.floor(due) + 1 - written;
      if (lines > 0) {
        await handle.write(line.repeat(lines));
        written += lines;
        const before = process.hrtime.bigint();
        await handle.datasync();
        datasyncMs.push(Number(process.hrtime.bigint() - before) / 1e6);
      }
      if (process.hrtime.bigint() >= endNs) break;
      // Until the next slot (timers fire about every millisecond at best).
      await new Promise((resolve) => setTimeout(resolve, options.intervalMs));
    }
  } finally {
    await handle.close();
    rmSync(directory, { recursive: true, force: true });
  }
  return { datasyncMs, lines: written };
}
