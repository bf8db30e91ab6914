import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { setupBot, startTestEmulator } from '../../helpers/emulator.js';

/**
 * The peak RSS of durable ingestion (issue 33: under 150 MiB for 100,000 votes), the run of
 * `npm run bench:votes` once: bench/helpers/votes-ingest.mjs on the built package, the agent as a
 * bot owner embeds it (votes on, the default file ledger, health on), 100,000 votes in pages of
 * 100, against the emulator. What a vote allocates dies young, but the tables a long-lived Map or
 * Set rebuilds as every page fills and empties it are made in V8's old generation, which only a
 * full collection frees: a pipeline keeping per-vote state that way grew the process past the
 * target. The pipeline counts its work in flight, and its per-vote maps are new ones once emptied.
 */

const INGEST = fileURLToPath(new URL('../../../bench/helpers/votes-ingest.mjs', import.meta.url));
const MiB = 1024 * 1024;

describe('durable ingestion', () => {
  it('100,000 votes through the agent\'s file ledger: every vote rewarded, peak RSS under 150 MiB', { timeout: 120_000 }, async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const { stdout } = await promisify(execFile)(process.execPath, ['--expose-gc', INGEST], {
      env: { PATH: process.env.PATH ?? '', NODE_ENV: 'production', BENCH_V1: emu.urls.v1, BENCH_V0: emu.urls.v0, BENCH_TOKEN: fx.projectToken },
      maxBuffer: 16 * MiB,
    });
    // The helper throws unless every vote was accepted and rewarded.
    const run = JSON.parse(stdout.split('\n').filter((line) => line.startsWith('{')).at(-1)!) as { votes: number; peakRss: number; vmHwm: number };
    expect(run.votes).toBe(100_000);
    expect(Math.max(run.peakRss, run.vmHwm) / MiB).toBeLessThan(150);
  });
});
