import { Registry } from 'prom-client';
import { describe, expect, it, vi } from 'vitest';
import { createListingAgent, parseConfig } from '../../../src/agent/agent.js';
import type { AgentEvents } from '../../../src/agent/events.js';
import type { AgentLogger } from '../../../src/log/agent-logger.js';
import { createReadiness } from '../../../src/runtime/readiness.js';
import type { ListingAgentConfigInput } from '../../../src/config/schema.js';
import { createAgentMetrics } from '../../../src/runtime/metrics.js';
import { BUFFER_KEY } from '../../../src/stats/buffer-store.js';
import { createStatsCapability } from '../../../src/stats/capability.js';
import type { PostFailure, PostResult } from '../../../src/stats/events.js';
import { createStatsPoster, type StatsPoster } from '../../../src/stats/poster.js';
import { createManualScheduler } from '../../helpers/manual-scheduler.js';
import type { CountReading, CountSource } from '../../../src/stats/source.js';
import { createMemoryStore } from '../../../src/store/memory.js';
import type { StateStore } from '../../../src/store/types.js';
import { clientFor, createFakeClock } from '../../helpers/client.js';
import { setupBot, startTestEmulator } from '../../helpers/emulator.js';

const MINUTE = 60_000;
const BATCH_PATH = '/api/v1/projects/@me/metrics/batch';

interface LogLine {
  level: 'error' | 'warn' | 'info' | 'debug';
  fields: Record<string, unknown>;
  msg: string;
}

function recordingLogger(lines: LogLine[]): AgentLogger {
  const at = (level: LogLine['level']) => (obj: object | string, msg?: string) =>
    void lines.push(typeof obj === 'string' ? { level, fields: {}, msg: obj } : { level, fields: obj as Record<string, unknown>, msg: msg ?? '' });
  const logger: AgentLogger = { error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug'), child: () => logger };
  return logger;
}

/** A count source whose reading the test sets. */
function settableSource(initial: CountReading) {
  const state = { reading: initial, reads: 0 };
  const source: CountSource = {
    description: 'test counts',
    read: async () => {
      state.reads += 1;
      return structuredClone(state.reading);
    },
  };
  return { state, source, set: (reading: CountReading) => void (state.reading = reading) };
}

type StatsInput = NonNullable<ListingAgentConfigInput['stats']>;

/**
 * An emulator on a fake clock (optionally `serviceBehindMs` behind ours), a bot, a client without
 * retries of its own (so each poster try is one request), and a poster on manual schedules.
 */
async function setup(options: { stats?: StatsInput; reading?: CountReading; store?: StateStore; serviceBehindMs?: number } = {}) {
  const clock = createFakeClock();
  const behind = options.serviceBehindMs ?? 0;
  const emu = await startTestEmulator({ now: () => clock.now() - behind });
  const fx = setupBot(emu);
  const client = clientFor(emu, { projectToken: fx.projectToken, clock, retry: { maxAttempts: 1 } });
  const config = parseConfig({
    service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 },
    stats: { enabled: true, interval: '30m', sampleInterval: '5m', ...options.stats },
  });
  const counts = settableSource(options.reading ?? { ready: true, serverCount: 120, shardCount: 2 });
  const store = options.store ?? createMemoryStore();
  const readiness = createReadiness(clock.now);
  const registry = new Registry();
  const metrics = createAgentMetrics(registry, readiness);
  const logs: LogLine[] = [];
  const posted: PostResult[] = [];
  const failed: PostFailure[] = [];
  const emit = <K extends Exclude<keyof AgentEvents, 'error'>>(event: K, ...args: AgentEvents[K]) => {
    if (event === 'posted') posted.push(args[0] as PostResult);
    if (event === 'postFailed') failed.push(args[0] as PostFailure);
  };
  const makePoster = (scheduler = createManualScheduler(clock.now)) => {
    const poster = createStatsPoster({
      source: counts.source,
      config: config.stats,
      client,
      store,
      logger: recordingLogger(logs),
      metrics,
      readiness,
      now: clock.now,
      emit,
      schedules: scheduler.factory,
    });
    return { poster, scheduler };
  };
  const { poster, scheduler } = makePoster();
  const applied = () => emu.admin.metrics(fx.projectId);
  const batchRequests = () => emu.admin.requests().filter((r) => r.method === 'POST' && r.path === BATCH_PATH);
  /** Runs what a real timer would have run by now: due retries, then the given schedules. */
  const tick = async (...names: string[]) => {
    await scheduler.runDue();
    for (const name of names) await scheduler.get(name)!.tick();
    await poster.idle();
  };
  return { clock, emu, fx, client, config, counts, store, readiness, registry, metrics, logs, posted, failed, poster, scheduler, applied, batchRequests, tick, makePoster };
}

async function started(poster: StatsPoster) {
  await poster.start();
  await poster.idle();
}

describe('stats poster: counts', () => {
  it('never posts a count that is not ready, then posts the true totals as they change', async () => {
    const t = await setup({ reading: { ready: false, reason: 'shard 1 of 2 is still connecting' } });
    await started(t.poster);
    expect(t.readiness.snapshot().components.stats).toMatchObject({ ready: false, detail: expect.stringContaining('shard 1 of 2 is still connecting') });

    // Ticks while the cache fills: nothing is sampled, nothing posted (never a 0).
    t.clock.advance(5 * MINUTE);
    await t.tick('sample', 'ready', 'post');
    expect(t.batchRequests()).toHaveLength(0);
    expect(t.poster.pendingSamples()).toBe(0);
    expect(await t.metrics.posts.get({ target: 'v1_batch', result: 'skipped' })).toBe(1);

    // Ready: the readiness poll posts at once, without waiting for the posting schedule.
    t.counts.set({ ready: true, serverCount: 120, shardCount: 2 });
    t.clock.advance(5_000);
    await t.tick('ready');
    expect(t.applied().map((m) => m.metrics)).toEqual([{ server_count: 120, shard_count: 2 }]);
    expect(t.readiness.snapshot().components.stats!.ready).toBe(true);
    expect(t.scheduler.get('ready')!.started).toBe(false);

    // Guilds join, then leave: the next flush carries each change with its time.
    t.clock.advance(5 * MINUTE);
    t.counts.set({ ready: true, serverCount: 125, shardCount: 2 });
    await t.tick('sample');
    t.clock.advance(5 * MINUTE);
    t.counts.set({ ready: true, serverCount: 123, shardCount: 2 });
    await t.tick('sample');
    t.clock.advance(20 * MINUTE);
    await t.tick('sample', 'post');
    const applied = t.applied();
    expect(applied.map((m) => m.metrics.server_count)).toEqual([120, 125, 123]);
    expect(t.posted.at(-1)).toMatchObject({ target: 'v1_batch', samples: [{ serverCount: 125 }, { serverCount: 123 }] });
    expect(await t.metrics.posts.get({ target: 'v1_batch', result: 'ok' })).toBe(2);
    expect(await t.metrics.lastSuccess.get({ capability: 'stats' })).toBe(t.clock.now() / 1000);

    // The cache empties (a reconnect): nothing new is posted, and certainly not a 0.
    t.counts.set({ ready: false, reason: 'reconnecting' });
    t.clock.advance(30 * MINUTE);
    await t.tick('sample', 'post');
    expect(t.applied()).toHaveLength(3);
    expect(t.applied().some((m) => m.metrics.server_count === 0)).toBe(false);
  });

  it('sends one entry per flush even when nothing changed (skipUnchanged)', async () => {
    const t = await setup();
    await started(t.poster);
    for (let i = 0; i < 6; i += 1) {
      t.clock.advance(5 * MINUTE);
      await t.tick('sample');
    }
    expect(t.poster.pendingSamples()).toBe(0);
    await t.tick('post');
    expect(t.batchRequests()).toHaveLength(2);
    const last = t.applied().at(-1)!;
    expect(last).toMatchObject({ metrics: { server_count: 120, shard_count: 2 }, timestamp: new Date(t.clock.now()).toISOString() });
  });
});

describe('stats poster: outages lose nothing', () => {
  it('a 2 h outage of 502s ends in one batch covering it in order, with backoff between tries', async () => {
    const t = await setup();
    await started(t.poster);
    expect(t.applied()).toHaveLength(1);
    const outageStart = t.clock.now();
    t.emu.admin.injectFault({ path: BATCH_PATH, status: 502, count: 1_000 });
    // Two hours of samples every 5 minutes, with the count moving, and posts every 30 minutes.
    for (let minute = 5; minute <= 120; minute += 5) {
      t.clock.advance(5 * MINUTE);
      t.counts.set({ ready: true, serverCount: 120 + minute, shardCount: 2 });
      await t.tick('sample', ...(minute % 30 === 0 ? ['post'] : []));
    }
    const outageEnd = t.clock.now();
    expect(t.applied()).toHaveLength(1);
    expect(t.poster.pendingSamples()).toBe(24);
    expect(t.failed.length).toBeGreaterThan(4);
    expect(t.failed.every((f) => f.target === 'v1_batch' && f.error.message.includes('502') && f.retryAt > outageStart)).toBe(true);
    // Nothing is dropped on a failure: what is pending only grows.
    const pending = t.failed.map((f) => f.pendingSamples);
    expect(pending).toEqual([...pending].sort((a, b) => a - b));
    // Logged once when it started, not at every try.
    expect(t.logs.filter((l) => l.level === 'warn' && l.msg.includes('backing off'))).toHaveLength(1);

    // The service answers again: the retry due next sends everything, in one batch.
    t.emu.admin.clearFaults();
    const before = t.batchRequests().filter((r) => r.status === 204).length;
    t.clock.advance(t.failed.at(-1)!.retryAt - t.clock.now());
    await t.tick();
    expect(t.batchRequests().filter((r) => r.status === 204).length).toBe(before + 1);
    const backfill = t.applied().slice(1);
    const times = backfill.map((m) => Date.parse(m.timestamp!));
    expect(times[0]).toBe(outageStart + 5 * MINUTE);
    expect(times.at(-1)).toBe(outageEnd);
    // In order, with no gap wider than the sample interval.
    for (let i = 1; i < times.length; i += 1) expect(times[i]! - times[i - 1]!).toBe(5 * MINUTE);
    expect(backfill.map((m) => m.metrics.server_count)).toEqual(Array.from({ length: 24 }, (_, i) => 125 + i * 5));
    expect(t.posted.at(-1)!.samples).toHaveLength(24);
    expect(t.poster.pendingSamples()).toBe(0);
    expect(t.logs.some((l) => l.level === 'info' && l.msg === 'posting works again')).toBe(true);
  });

  it('backs off exponentially after 5xx, capped at the interval', async () => {
    const t = await setup();
    await started(t.poster);
    t.emu.admin.injectFault({ path: BATCH_PATH, status: 503, count: 1_000 });
    t.clock.advance(30 * MINUTE);
    await t.tick('post');
    const delays: number[] = [];
    for (let i = 0; i < 8; i += 1) {
      const failure = t.failed.at(-1)!;
      delays.push(failure.retryAt - t.clock.now());
      t.clock.advance(failure.retryAt - t.clock.now());
      await t.tick();
    }
    expect(delays.map((ms) => ms / 1000)).toEqual([30, 60, 120, 240, 480, 960, 1800, 1800]);
  });

  it('thins a long outage to 100 entries that still span it, newest at full resolution', async () => {
    const t = await setup({ stats: { sampleInterval: '1m' } });
    await started(t.poster);
    const outageStart = t.clock.now();
    t.emu.admin.injectFault({ path: BATCH_PATH, status: 502, count: 10_000 });
    for (let minute = 1; minute <= 180; minute += 1) {
      t.clock.advance(MINUTE);
      t.counts.set({ ready: true, serverCount: 1_000 + minute, shardCount: 2 });
      await t.tick('sample', ...(minute % 30 === 0 ? ['post'] : []));
    }
    const outageEnd = t.clock.now();
    expect(t.poster.pendingSamples()).toBeLessThanOrEqual(100);
    t.emu.admin.clearFaults();
    t.clock.advance(t.failed.at(-1)!.retryAt - t.clock.now());
    await t.tick();
    const backfill = t.applied().slice(1);
    expect(backfill.length).toBeLessThanOrEqual(100);
    expect(backfill.length).toBeGreaterThan(50);
    const times = backfill.map((m) => Date.parse(m.timestamp!));
    expect(times[0]).toBe(outageStart + MINUTE);
    expect(times.at(-1)).toBe(outageEnd);
    const gaps = times.slice(1).map((time, i) => time - times[i]!);
    expect(gaps.every((gap) => gap > 0)).toBe(true);
    // The newest half is every minute; older gaps grow, never shrink, toward the outage start.
    expect(gaps.slice(-Math.floor(gaps.length / 2)).every((gap) => gap === MINUTE)).toBe(true);
    for (let i = 1; i < gaps.length; i += 1) expect(gaps[i]!).toBeLessThanOrEqual(gaps[i - 1]!);
  });

  it('honours a 429 Retry-After: no request before it has passed', async () => {
    const t = await setup();
    await started(t.poster);
    t.emu.admin.injectFault({ path: BATCH_PATH, status: 429, retry_after: 120, count: 1 });
    t.clock.advance(30 * MINUTE);
    await t.tick('post');
    const limited = t.failed.at(-1)!;
    expect(limited.retryAt).toBe(t.clock.now() + 120_000);
    const tries = t.batchRequests().length;
    // A regular post (say a manual one) inside the window is held back; so is an early retry timer.
    t.clock.advance(60_000);
    await t.tick('post');
    t.clock.advance(59_000);
    await t.tick();
    expect(t.batchRequests()).toHaveLength(tries);
    t.clock.advance(1_000);
    await t.tick();
    expect(t.batchRequests()).toHaveLength(tries + 1);
    expect(t.batchRequests().at(-1)!.status).toBe(204);
    const gapMs = Date.parse(t.batchRequests().at(-1)!.at) - Date.parse(t.batchRequests().at(-2)!.at);
    expect(gapMs).toBeGreaterThanOrEqual(120_000);
  });

  it('keeps going after a refused token (401, 403), logging each change once with the fix', async () => {
    const t = await setup();
    await started(t.poster);
    t.emu.admin.injectFault({ path: BATCH_PATH, status: 401, count: 3 });
    t.emu.admin.injectFault({ path: BATCH_PATH, status: 403, count: 1 });
    for (let i = 0; i < 5; i += 1) {
      t.clock.advance(30 * MINUTE);
      await t.tick('sample', 'post');
      if (i === 0) expect(t.readiness.snapshot().components.stats).toMatchObject({ ready: false, detail: expect.stringContaining('check service.token') });
    }
    const errors = t.logs.filter((l) => l.level === 'error');
    expect(errors.map((l) => l.msg)).toEqual([
      expect.stringContaining('the service refused the project token: check service.token'),
      expect.stringContaining('the service refused the project token: check service.token'),
    ]);
    expect(errors.map((l) => String(l.fields.err))).toEqual([expect.stringContaining('401'), expect.stringContaining('403')]);
    // Slow retries: one try per interval, no retry timer in between.
    expect(t.failed).toHaveLength(4);
    expect(t.scheduler.all('retry')).toHaveLength(0);
    // The fifth post went through, with everything sampled meanwhile.
    expect(t.batchRequests().at(-1)!.status).toBe(204);
    expect(t.poster.pendingSamples()).toBe(0);
    expect(t.readiness.snapshot().components.stats!.ready).toBe(true);
  });

  it('a deleted project is refused, logged once, and the loop goes on', async () => {
    const t = await setup();
    await started(t.poster);
    t.emu.admin.deleteProject(t.fx.projectId);
    for (let i = 1; i <= 3; i += 1) {
      t.clock.advance(30 * MINUTE);
      t.counts.set({ ready: true, serverCount: 120 + i, shardCount: 2 });
      await t.tick('sample', 'post');
    }
    expect(t.failed).toHaveLength(3);
    const errors = t.logs.filter((l) => l.level === 'error');
    expect(errors).toHaveLength(1);
    expect(errors[0]!.msg).toContain('no longer exists');
    expect(t.poster.pendingSamples()).toBe(3);
    // Refused: retried at the next regular post, not on a retry timer.
    expect(t.scheduler.get('retry')?.started ?? false).toBe(false);
  });

  it('a 422 for timestamps ahead of the service (our clock is fast) keeps them until the service catches up', async () => {
    // The service's clock is 8 minutes behind ours: entries stamped within the last 3 minutes are refused.
    const t = await setup({ serviceBehindMs: 8 * MINUTE, stats: { sampleInterval: '1m' } });
    await started(t.poster);
    for (let minute = 1; minute <= 10; minute += 1) {
      t.clock.advance(MINUTE);
      t.counts.set({ ready: true, serverCount: 200 + minute, shardCount: 2 });
      await t.tick('sample');
    }
    await t.tick('post');
    const refused = t.logs.find((l) => l.level === 'error')!;
    expect(refused.msg).toContain('too far in the future');
    expect(refused.fields.fix).toContain('clock');
    // Entries up to 5 minutes ahead of the service were applied; the rest wait.
    expect(t.poster.pendingSamples()).toBe(3);
    t.clock.advance(30 * MINUTE);
    await t.tick('post');
    expect(t.poster.pendingSamples()).toBe(0);
    const counts = t.applied().map((m) => m.metrics.server_count);
    expect(counts.slice(1, 11)).toEqual(Array.from({ length: 10 }, (_, i) => 201 + i));
  });
});

describe('stats poster: modes', () => {
  it('patch mode posts the current counts with one PATCH per post', async () => {
    const t = await setup({ stats: { mode: 'patch' } });
    await started(t.poster);
    expect(t.scheduler.get('sample')).toBeUndefined();
    t.counts.set({ ready: true, serverCount: 150, shardCount: 3 });
    t.clock.advance(30 * MINUTE);
    await t.tick('post');
    expect(t.applied().map((m) => [m.source, m.metrics])).toEqual([
      ['v1', { server_count: 120, shard_count: 2 }],
      ['v1', { server_count: 150, shard_count: 3 }],
    ]);
    expect(t.posted.map((p) => p.target)).toEqual(['v1', 'v1']);
    expect(await t.metrics.posts.get({ target: 'v1', result: 'ok' })).toBe(2);
  });

  it('v0 mode posts server_count, per-shard shards and shard_count to the legacy endpoint too', async () => {
    const t = await setup({ stats: { v0: true }, reading: { ready: true, serverCount: 130, shardCount: 2, shards: [60, 70] } });
    await started(t.poster);
    expect(await t.client.v0.getStats()).toEqual({ server_count: 130, shards: [60, 70], shard_count: 2 });
    expect(t.posted.map((p) => p.target)).toEqual(['v1_batch', 'v0']);
    expect(t.posted[1]).toMatchObject({ shards: [60, 70], samples: [{ serverCount: 130, shardCount: 2 }] });
    // A v0 failure is the v0 target's alone: v1 goes on.
    t.emu.admin.injectFault({ path: '/api/bots/*', status: 500, count: 1 });
    t.counts.set({ ready: true, serverCount: 131, shardCount: 2, shards: [61, 70] });
    t.clock.advance(30 * MINUTE);
    await t.tick('post');
    expect(t.failed.map((f) => f.target)).toEqual(['v0']);
    expect(t.applied().filter((m) => m.source === 'v1-batch').at(-1)!.metrics.server_count).toBe(131);
    await t.tick();
    t.clock.advance(t.failed[0]!.retryAt - t.clock.now());
    await t.tick();
    expect(await t.client.v0.getStats()).toEqual({ server_count: 131, shards: [61, 70], shard_count: 2 });
  });
});

describe('stats poster: restart and stop', () => {
  it('persists the buffer after every change and on stop(); a new poster posts it', async () => {
    const store = createMemoryStore();
    const first = await setup({ store });
    await started(first.poster);
    first.emu.admin.injectFault({ path: BATCH_PATH, status: 502, count: 1_000 });
    for (let minute = 5; minute <= 15; minute += 5) {
      first.clock.advance(5 * MINUTE);
      first.counts.set({ ready: true, serverCount: 300 + minute, shardCount: 2 });
      await first.tick('sample');
    }
    // Saved already, before any stop (a crash loses nothing).
    expect((await store.get<{ samples: unknown[] }>(BUFFER_KEY))!.samples).toHaveLength(3);
    first.counts.set({ ready: true, serverCount: 320, shardCount: 2 });
    await first.tick('sample');
    await first.poster.stop(first.clock.now() + 1_000);
    expect((await store.get<{ samples: { serverCount: number }[] }>(BUFFER_KEY))!.samples.map((s) => s.serverCount)).toEqual([305, 310, 315, 320]);
    // After stop nothing runs.
    await first.tick('sample', 'post');
    expect(first.poster.pendingSamples()).toBe(4);

    // A new poster (a restart) against a working service, with a source not ready yet.
    const second = await setup({ store, reading: { ready: false, reason: 'starting' } });
    await started(second.poster);
    await second.tick('post');
    expect(second.applied().map((m) => m.metrics.server_count)).toEqual([305, 310, 315, 320]);
    expect((await store.get<{ samples: unknown[] }>(BUFFER_KEY))!.samples).toEqual([]);
  });

  it('/metrics: the interval at start, and the last accepted post carried over a restart (unchanged counts wait for the keep-alive)', async () => {
    const store = createMemoryStore();
    const first = await setup({ store, stats: { jitter: '1m' } });
    await started(first.poster);
    expect(first.applied()).toHaveLength(1);
    const postedAt = first.clock.now();
    expect(await first.metrics.lastSuccess.get({ capability: 'stats' })).toBe(postedAt / 1000);
    await first.poster.stop(first.clock.now() + 1_000);

    // Ten minutes later, same counts: the new poster does not post, yet the last success stands.
    const second = await setup({ store, stats: { jitter: '1m' } });
    second.clock.advance(postedAt + 10 * MINUTE - second.clock.now());
    expect(second.clock.now()).toBe(postedAt + 10 * MINUTE);
    await started(second.poster);
    expect(second.applied()).toEqual([]);
    const text = await second.registry.metrics();
    expect(text).toMatch(/^listing_agent_stats_interval_seconds 1860$/m);
    expect(text).toContain(`listing_agent_last_success_timestamp_seconds{capability="stats"} ${postedAt / 1000}`);
  });

  it('stop() waits for a post in flight until the deadline, then cuts it short and keeps its samples', async () => {
    const store = createMemoryStore();
    const t = await setup({ store });
    await started(t.poster);
    t.clock.advance(5 * MINUTE);
    t.counts.set({ ready: true, serverCount: 400, shardCount: 2 });
    await t.tick('sample');
    // The service takes 3 s (real time) to answer this post.
    t.emu.admin.injectFault({ path: BATCH_PATH, delay_ms: 3_000, count: 1 });
    const posting = t.scheduler.get('post')!.tick();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const started_ = Date.now();
    await t.poster.stop(t.clock.now() + 300);
    expect(Date.now() - started_).toBeLessThan(2_500);
    await posting;
    const saved = await store.get<{ samples: { serverCount: number }[] }>(BUFFER_KEY);
    expect(saved!.samples.map((s) => s.serverCount)).toEqual([400]);
    expect(t.failed).toEqual([]);
  });
});

describe('stats poster: the project', () => {
  it('a project that is not a bot is refused once, with the fix, and nothing is posted', async () => {
    const t = await setup();
    const server = t.emu.admin.createProject({ platform: 'discord', type: 'server', name: 'A Server' });
    const config = parseConfig({ service: { token: server.project_token, v1: t.emu.urls.v1, v0: t.emu.urls.v0 }, stats: { enabled: true } });
    const logs: LogLine[] = [];
    const scheduler = createManualScheduler(t.clock.now);
    const poster = createStatsPoster({
      source: t.counts.source,
      config: config.stats,
      client: clientFor(t.emu, { projectToken: server.project_token, clock: t.clock, retry: { maxAttempts: 1 } }),
      store: createMemoryStore(),
      logger: recordingLogger(logs),
      now: t.clock.now,
      schedules: scheduler.factory,
    });
    await started(poster);
    t.clock.advance(30 * MINUTE);
    await scheduler.get('post')!.tick();
    const errors = logs.filter((l) => l.level === 'error');
    expect(errors).toHaveLength(1);
    expect(errors[0]!.msg).toContain('discord/server');
    expect(t.emu.admin.metrics(server.project.id)).toEqual([]);
  });
});

describe('the stats capability in the agent', () => {
  it('opens the source, posts once the counts are ready, reports readiness and events, and stops cleanly', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const counts = settableSource({ ready: true, serverCount: 77, shardCount: 1 });
    const calls: string[] = [];
    const source: CountSource = { ...counts.source, start: async () => void calls.push('start'), stop: async () => void calls.push('stop') };
    const scheduler = createManualScheduler();
    const store = createMemoryStore();
    const agent = createListingAgent({
      config: { service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 }, health: { enabled: false }, stats: { enabled: true } },
      store,
      transport: { retry: { maxAttempts: 1 } },
      capabilities: [createStatsCapability(source, { schedules: scheduler.factory })],
    });
    const posted: PostResult[] = [];
    agent.on('posted', (result) => posted.push(result));
    await agent.start();
    await vi.waitFor(() => expect(posted).toHaveLength(1));
    expect(posted[0]).toMatchObject({ target: 'v1_batch', samples: [{ serverCount: 77, shardCount: 1 }] });
    expect(emu.admin.metrics(fx.projectId).map((m) => m.metrics)).toEqual([{ server_count: 77, shard_count: 1 }]);
    expect(agent.readiness.snapshot().components.stats).toMatchObject({ ready: true, detail: expect.stringContaining('test counts') });
    expect(await agent.metrics.posts.get({ target: 'v1_batch', result: 'ok' })).toBe(1);
    counts.set({ ready: true, serverCount: 78, shardCount: 1 });
    await scheduler.get('sample')!.tick();
    await agent.stop();
    expect(calls).toEqual(['start', 'stop']);
    expect(scheduler.get('post')!.started).toBe(false);
    expect((await store.get<{ samples: { serverCount: number }[] }>(BUFFER_KEY))!.samples.map((s) => s.serverCount)).toEqual([78]);
  });
});
