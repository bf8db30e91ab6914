/**
 * One run of bench/votes.bench.ts, in a process of its own (`node --expose-gc
 * bench/helpers/votes-ingest.mjs [--reminders]`): the agent as a bot owner embeds it
 * (`createListingAgent` from the built package's root) with `votes.enabled` and the default file
 * state (the durable vote ledger, `<state.directory>/votes.journal`), health on (the default, on
 * 127.0.0.1:0), one `agent.on('vote')` listener (an async no-op, counted); the service is the
 * emulator the bench runs (BENCH_V1, BENCH_V0, BENCH_TOKEN; it has no votes, so the poller finds
 * none). 100,000 votes of distinct voters go through `agent.votePipeline` in pages of 100, each
 * page awaited, as the poller hands them over (each costs at least one durable journal commit),
 * until every listener call has run.
 *
 * With `--reminders`, `votes.reminders.enabled` is on (with an `agent.on('reminder')` listener):
 * every vote gets its reminder, due 12 h later, so none fires during the run; the run then checks
 * through `/status.json` (`votes.reminders.scheduled`) that all 100,000 are held.
 *
 * Prints one JSON line: the rate, CPU per vote, RSS (before the first page, the highest sampled,
 * VmHWM over the process's whole life) and the V8 heap plus array buffers after collections with
 * everything still held (reminders on minus off is what the reminders hold).
 * `BENCH_DIST=<dir>/dist` loads another build; `BENCH_CPU_PROFILE=<file.cpuprofile>` and
 * `BENCH_HEAP_PROFILE=<file.heapprofile>` profile the ingestion, first page to idle (bench/PROFILE.md).
 */
import { readFileSync, rmSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startCpuProfile, startHeapSampling, stopCpuProfile, stopHeapSampling } from './profile.mjs';

const env = process.env;
const dist = env.BENCH_DIST ? pathToFileURL(`${env.BENCH_DIST.replace(/\/$/, '')}/`) : new URL('../../dist/', import.meta.url);
const { createListingAgent } = await import(new URL('index.js', dist).href);
const { voteKey } = await import(new URL('public/votes.js', dist).href);

const VOTES = 100_000;
const PAGE = 100;
const HOUR = 3_600_000;
const PROJECT_ID = '803190510032756736';

/** VmHWM of this process (its peak RSS over its whole life), bytes (Linux), or undefined. */
function ownPeakRss() {
  try {
    const match = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8'));
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Page `index`: 100 votes of distinct voters, cast in the last minute (so each reminder is due
 * about 12 h from now), each with its key as both roads make it (`voteKey`).
 */
function page(index, now) {
  const votes = [];
  for (let i = 0; i < PAGE; i++) {
    const n = index * PAGE + i;
    const userId = String(300_000_000_000_000_000n + BigInt(n));
    const created = now - 60_000 + (n % 60_000);
    votes.push({
      key: voteKey(userId, created),
      userId,
      platformId: String(100_000_000_000_000_000n + BigInt(n)),
      projectId: PROJECT_ID,
      weight: 1,
      createdAt: new Date(created).toISOString(),
      expiresAt: new Date(created + 12 * HOUR).toISOString(),
      road: 'poll',
    });
  }
  return votes;
}

/** Collections until what is left is what is held (the second of each pair collects what the first's finalizers freed). */
async function settle() {
  for (let i = 0; i < 4; i++) {
    globalThis.gc?.();
    globalThis.gc?.();
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The agent of the run, started; `counted.votes` counts its listener's calls. */
async function startAgent(directory, reminders) {
  const agent = createListingAgent({
    token: env.BENCH_TOKEN,
    config: {
      service: { v1: env.BENCH_V1, v0: env.BENCH_V0 },
      votes: { enabled: true, reminders: { enabled: reminders } },
      health: { enabled: true, listen: '127.0.0.1:0' },
      state: { directory },
    },
  });
  const counted = { votes: 0 };
  agent.on('vote', async () => {
    counted.votes += 1;
  });
  if (reminders) agent.on('reminder', async () => undefined);
  agent.on('error', (error) => process.stderr.write(`agent: ${error.message}\n`));
  await agent.start();
  if (agent.votePipeline === undefined) throw new Error('the agent started without its vote pipeline');
  return { agent, counted };
}

/** `votes.reminders.scheduled` of the agent's /status.json. */
async function scheduledReminders(agent) {
  const response = await fetch(new URL('/status.json', agent.healthServerUrl));
  const document = await response.json();
  return document.votes?.reminders?.scheduled ?? null;
}

async function runIngestion({ reminders = false } = {}) {
  const directory = await mkdtemp(join(tmpdir(), 'listing-agent-votes-bench-'));
  try {
    const { agent, counted } = await startAgent(directory, reminders);
    const pipeline = agent.votePipeline;
    const now = Date.now();
    await settle();
    const baselineRss = process.memoryUsage.rss();
    let peakRss = baselineRss;
    const sample = () => (peakRss = Math.max(peakRss, process.memoryUsage.rss()));
    const sampler = setInterval(sample, 5);
    if (env.BENCH_HEAP_PROFILE) await startHeapSampling();
    if (env.BENCH_CPU_PROFILE) await startCpuProfile();
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    let accepted = 0;
    for (let index = 0; index < VOTES / PAGE; index++) {
      accepted += (await pipeline.ingest(page(index, now), 'poll')).accepted.length;
      sample();
    }
    await pipeline.idle();
    const elapsedMs = performance.now() - started;
    const cpu = process.cpuUsage(cpuBefore);
    if (env.BENCH_CPU_PROFILE) await stopCpuProfile(env.BENCH_CPU_PROFILE);
    if (env.BENCH_HEAP_PROFILE) await stopHeapSampling(env.BENCH_HEAP_PROFILE);
    sample();
    clearInterval(sampler);
    // Everything still held (the ledger's keys, the reminders): on minus off is the reminders' share.
    await settle();
    const { heapUsed, arrayBuffers } = process.memoryUsage();
    const scheduled = reminders ? await scheduledReminders(agent) : 0;
    await agent.stop();
    if (accepted !== VOTES || counted.votes !== VOTES) {
      throw new Error(`expected ${VOTES} votes accepted and rewarded, got ${accepted} and ${counted.votes}`);
    }
    if (reminders && scheduled !== VOTES) throw new Error(`expected ${VOTES} reminders scheduled, /status.json says ${scheduled}`);
    return {
      votes: VOTES,
      page: PAGE,
      reminders,
      scheduled,
      votesPerSecond: (VOTES / elapsedMs) * 1000,
      elapsedMs,
      cpuUsPerVote: (cpu.user + cpu.system) / VOTES,
      baselineRss,
      peakRss,
      heldAfterGc: heapUsed + arrayBuffers,
    };
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

const result = await runIngestion({ reminders: process.argv.includes('--reminders') });
process.stdout.write(`${JSON.stringify({ ...result, vmHwm: ownPeakRss() ?? 0, node: process.version })}\n`);
// A poll timer or a socket of the stopped agent must not keep the run's process.
process.exit(0);
