import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseConfig } from '../../../src/agent/agent.js';
import type { ListingAgentConfigInput } from '../../../src/config/schema.js';
import { BUFFER_KEY } from '../../../src/stats/buffer-store.js';
import { createStatsPoster, type StatsPoster } from '../../../src/stats/poster.js';
import { createManualScheduler } from '../../helpers/manual-scheduler.js';
import type { CountReading, CountSource } from '../../../src/stats/source.js';
import { createPushSource, pushShardCounts, type PushSource } from '../../../src/stats/sources/push.js';
import { createMemoryStore } from '../../../src/store/memory.js';
import type { StateStore } from '../../../src/store/types.js';
import { clientFor, createFakeClock, type FakeClock } from '../../helpers/client.js';
import { setupBot, startTestEmulator } from '../../helpers/emulator.js';

/*
 * The first post after a start: at once when a push source signals (not at the next 5 s poll),
 * and not at all when the counts equal the last post saved before a restart and the keep-alive
 * is not due yet. Every schedule is manual: a post that happens without a tick happened "at once".
 */

const MINUTE = 60_000;
const BATCH_PATH = '/api/v1/projects/@me/metrics/batch';
const ME_PATH = '/api/v1/projects/@me';
const METRICS_PATH = '/api/v1/projects/@me/metrics';
const KEY = 'push-key-0123456789abcdef';

type StatsInput = NonNullable<ListingAgentConfigInput['stats']>;

const pushSources: PushSource[] = [];
/** Each poster with its clock: a stop deadline is a time on the poster's clock, not the real one. */
const posters: Array<{ poster: StatsPoster; now: () => number }> = [];
afterEach(async () => {
  await Promise.all(posters.splice(0).map(({ poster, now }) => poster.stop(now())));
  await Promise.all(pushSources.splice(0).map((source) => source.stop()));
});

/** A count source whose reading the test sets; `signal()` calls its `onChange` listeners. */
function settableSource(initial: CountReading, options: { readDelayMs?: number } = {}) {
  const state = { reading: initial, reads: 0, concurrent: 0, maxConcurrent: 0 };
  const listeners = new Set<() => void>();
  const source: CountSource = {
    description: 'test counts',
    async read() {
      state.reads += 1;
      state.concurrent += 1;
      state.maxConcurrent = Math.max(state.maxConcurrent, state.concurrent);
      // What the source knew when asked, answered after the delay (a slow read misses a later change).
      const reading = structuredClone(state.reading);
      if (options.readDelayMs) await new Promise((resolve) => setTimeout(resolve, options.readDelayMs));
      state.concurrent -= 1;
      return reading;
    },
    onChange(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
  };
  return { state, source, set: (reading: CountReading) => void (state.reading = reading), signal: () => listeners.forEach((l) => l()), listeners };
}

async function setup(options: { stats?: StatsInput; store?: StateStore; clock?: FakeClock } = {}) {
  const clock = options.clock ?? createFakeClock();
  const emu = await startTestEmulator({ now: () => clock.now() });
  const fx = setupBot(emu);
  const client = clientFor(emu, { projectToken: fx.projectToken, clock, retry: { maxAttempts: 1 } });
  const config = parseConfig({
    service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 },
    stats: { enabled: true, interval: '30m', sampleInterval: '5m', ...options.stats },
  });
  const store = options.store ?? createMemoryStore();
  const makePoster = (source: CountSource, extra: { project?: { platform: string; type: string } } = {}) => {
    const scheduler = createManualScheduler(clock.now);
    const poster = createStatsPoster({ source, config: config.stats, client, store, now: clock.now, schedules: scheduler.factory, ...extra });
    posters.push({ poster, now: clock.now });
    return { poster, scheduler };
  };
  /** v1 posts: batches, or PATCHes in patch mode. */
  const posts = () => emu.admin.requests().filter((r) => (r.method === 'POST' && r.path === BATCH_PATH) || (r.method === 'PATCH' && r.path === METRICS_PATH));
  const meRequests = () => emu.admin.requests().filter((r) => r.method === 'GET' && r.path === ME_PATH);
  return { clock, emu, fx, config, store, makePoster, posts, meRequests };
}

describe('stats poster: a source that signals', () => {
  it('posts the moment the push source records a report, without waiting for the ready poll', async () => {
    const t = await setup();
    const push = createPushSource({ listen: { host: '127.0.0.1', port: 0 }, key: KEY, now: t.clock.now });
    pushSources.push(push);
    await push.start();
    const { poster, scheduler } = t.makePoster(push);
    await poster.start();
    await poster.idle();
    expect(t.posts()).toHaveLength(0);

    // The bot logs in after its sidecar: its report comes while the poster waits. No schedule is ticked.
    await pushShardCounts({ url: push.url(), key: KEY, reports: { shards: [40, 2] } });
    await vi.waitFor(() => expect(t.posts()).toHaveLength(1), { timeout: 2_000, interval: 5 });
    await poster.idle();
    expect(t.emu.admin.metrics(t.fx.projectId).map((m) => m.metrics)).toEqual([{ server_count: 42, shard_count: 2 }]);
    // The 5 s poll is still there as the fallback, but it never had to run: it stopped once ready.
    expect(scheduler.get('ready')!.started).toBe(false);

    // Later reports do not post: after the first post, only the schedule does.
    await pushShardCounts({ url: push.url(), key: KEY, reports: { shards: [41, 2] } });
    await poster.idle();
    expect(t.posts()).toHaveLength(1);
  });

  it('never has more than one read in flight, and reads once more after a signal that came during a read', async () => {
    const t = await setup();
    const counts = settableSource({ ready: false, reason: 'shard 1 has not reported' }, { readDelayMs: 50 });
    const { poster } = t.makePoster(counts.source);
    await poster.start();
    // The first read (the start's) is in flight; three reports arrive during it.
    counts.set({ ready: true, serverCount: 7, shardCount: 1 });
    counts.signal();
    counts.signal();
    counts.signal();
    await poster.idle();
    expect(counts.state.maxConcurrent).toBe(1);
    // The start's read (not ready then) and one more for the three signals, which posted.
    expect(counts.state.reads).toBe(2);
    expect(t.posts()).toHaveLength(1);
    // Once ready, signals are ignored, and stop() unsubscribes.
    counts.signal();
    await poster.idle();
    expect(counts.state.reads).toBe(2);
    await poster.stop(t.clock.now());
    expect(counts.listeners.size).toBe(0);
  });
});

describe('stats poster: the first post after a restart', () => {
  /** A first run that posts 120/2 at 10:00 and stops; the store keeps its last post. */
  async function firstRun(stats?: StatsInput) {
    const store = createMemoryStore();
    const t = await setup({ store, ...(stats ? { stats } : {}) });
    const counts = settableSource({ ready: true, serverCount: 120, shardCount: 2 });
    const { poster } = t.makePoster(counts.source);
    await poster.start();
    await poster.idle();
    expect(t.posts()).toHaveLength(1);
    await poster.stop(t.clock.now() + 1_000);
    const saved = await store.get<{ posted?: { serverCount: number; timestamp: number } }>(BUFFER_KEY);
    expect(saved!.posted).toMatchObject({ serverCount: 120, timestamp: t.clock.now() });
    return { ...t, postedAt: t.clock.now() };
  }

  it('with the same counts, waits for the keep-alive (last post + interval), then posts every interval from there', async () => {
    const t = await firstRun();
    // Restarted 10 minutes later, same counts.
    t.clock.advance(10 * MINUTE);
    const counts = settableSource({ ready: true, serverCount: 120, shardCount: 2 });
    const { poster, scheduler } = t.makePoster(counts.source);
    await poster.start();
    await poster.idle();
    expect(t.posts()).toHaveLength(1);
    // The post schedule now runs on the keep-alive's grid: first at 10:30, not at 10:40.
    const post = scheduler.get('post')!;
    expect(post.dueAt).toBe(t.postedAt + 30 * MINUTE);
    expect(scheduler.all('post')[0]!.started).toBe(false);

    t.clock.advance(19 * MINUTE);
    expect(await scheduler.runDue()).toBe(0);
    t.clock.advance(1 * MINUTE);
    expect(await scheduler.runDue()).toBe(1);
    await poster.idle();
    expect(t.posts()).toHaveLength(2);
    expect(post.dueAt).toBe(t.postedAt + 60 * MINUTE);
  });

  it('with changed counts, posts at once', async () => {
    const t = await firstRun();
    t.clock.advance(10 * MINUTE);
    const counts = settableSource({ ready: true, serverCount: 121, shardCount: 2 });
    const { poster, scheduler } = t.makePoster(counts.source);
    await poster.start();
    await poster.idle();
    expect(t.posts()).toHaveLength(2);
    expect(t.emu.admin.metrics(t.fx.projectId).at(-1)!.metrics).toEqual({ server_count: 121, shard_count: 2 });
    expect(scheduler.all('post')).toHaveLength(1);
  });

  it('with the same counts but the keep-alive due (the last post an interval ago or more), posts at once', async () => {
    const t = await firstRun();
    t.clock.advance(30 * MINUTE);
    const { poster } = t.makePoster(settableSource({ ready: true, serverCount: 120, shardCount: 2 }).source);
    await poster.start();
    await poster.idle();
    expect(t.posts()).toHaveLength(2);
  });

  it('in patch mode too', async () => {
    const t = await firstRun({ mode: 'patch' });
    t.clock.advance(5 * MINUTE);
    const { poster } = t.makePoster(settableSource({ ready: true, serverCount: 120, shardCount: 2 }).source);
    await poster.start();
    await poster.idle();
    expect(t.posts().map((r) => r.method)).toEqual(['PATCH']);
  });

  it('a first start (nothing posted yet) posts at once', async () => {
    const t = await setup();
    const { poster } = t.makePoster(settableSource({ ready: true, serverCount: 1, shardCount: 1 }).source);
    await poster.start();
    await poster.idle();
    expect(t.posts()).toHaveLength(1);
  });
});

describe('stats poster: the project', () => {
  it('does not ask GET /projects/@me when given the project (the agent has it)', async () => {
    const t = await setup();
    const { poster } = t.makePoster(settableSource({ ready: true, serverCount: 5, shardCount: 1 }).source, { project: { platform: 'discord', type: 'bot' } });
    await poster.start();
    await poster.idle();
    expect(t.posts()).toHaveLength(1);
    expect(t.meRequests()).toHaveLength(0);
  });

  it('asks it once without', async () => {
    const t = await setup();
    const { poster, scheduler } = t.makePoster(settableSource({ ready: true, serverCount: 5, shardCount: 1 }).source);
    await poster.start();
    await poster.idle();
    await scheduler.get('post')!.tick();
    expect(t.posts()).toHaveLength(2);
    expect(t.meRequests()).toHaveLength(1);
  });
});
