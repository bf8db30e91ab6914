/**
 * One row of bench/embedded-footprint.bench.ts, run as a child process from a temporary bot project
 * (the packed package installed as test/runtimes/packed.ts installs it; discord.js and
 * topgg-autoposter beside it). It imports discord.js and makes a `Client` (not logged in: no
 * gateway, the process a bot is before it connects), then, by `BENCH_ROW`:
 *   djs         nothing more (the baseline);
 *   autoposter  `require('topgg-autoposter')` (timed);
 *   import      `import('listing-agent')` (timed), nothing started;
 *   stats       + an agent posting stats only (counts from `countSource`, health off), waits for its first post;
 *   full        + stats, votes (cursor polled) and health (on 127.0.0.1:0), waits for the first post.
 * The service is an emulator in another process (BENCH_V1, BENCH_V0, BENCH_TOKEN).
 * Then two forced collections (`--expose-gc`) and one JSON line: heap used, RSS, the import's
 * milliseconds; then CPU (utime+stime of /proc/self/stat is not needed: process.cpuUsage) over
 * BENCH_SAMPLE_MS of idling, and a second line with it.
 */
import { createRequire } from 'node:module';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

const require = createRequire(join(process.cwd(), 'index.js'));
const env = process.env;
const row = env.BENCH_ROW ?? 'djs';
const sampleMs = Number(env.BENCH_SAMPLE_MS ?? 5000);

const { Client, GatewayIntentBits } = require('discord.js');
const client = new Client({ intents: [GatewayIntentBits.Guilds] });
globalThis.gc();
globalThis.gc();

let importMs = 0;
let agent;
if (row === 'autoposter') {
  const start = performance.now();
  require('topgg-autoposter');
  importMs = performance.now() - start;
} else if (row !== 'djs') {
  const start = performance.now();
  const { createListingAgent } = await import('listing-agent');
  importMs = performance.now() - start;
  if (row === 'stats' || row === 'full') {
    const full = row === 'full';
    const config = {
      service: { v1: env.BENCH_V1, v0: env.BENCH_V0 },
      health: full ? { enabled: true, listen: '127.0.0.1:0' } : { enabled: false },
      stats: { enabled: true },
      votes: { enabled: full },
      state: { directory: mkdtempSync(join(tmpdir(), 'la-footprint-state-')) },
    };
    agent = createListingAgent({
      token: env.BENCH_TOKEN,
      config,
      countSource: { description: 'the bench bot', read: async () => ({ ready: true, serverCount: 1234, shardCount: 2, shards: [617, 617] }) },
    });
    const posted = new Promise((resolve, reject) => {
      agent.once('posted', resolve);
      agent.once('error', reject);
    });
    await agent.start();
    await posted;
  }
}
globalThis.gc();
globalThis.gc();
const memory = process.memoryUsage();
const cpu0 = process.cpuUsage();
const t0 = performance.now();
await new Promise((resolve) => setTimeout(resolve, sampleMs));
const cpu = process.cpuUsage(cpu0);
const elapsed = performance.now() - t0;
console.log(JSON.stringify({ row, heapUsed: memory.heapUsed, rss: memory.rss, importMs, cpuMs: (cpu.user + cpu.system) / 1000, elapsedMs: elapsed, client: typeof client }));
if (agent) await agent.stop();
process.exit(0);
