import { describe, expect, it } from 'vitest';
import { buildStatusDocument, withoutSecrets, type StatusLive } from '../../../src/status/build.js';
import { createStatusCollector, thinOldest } from '../../../src/status/collector.js';

const HOUR = 3_600_000;
const START = Date.parse('2026-03-04T12:00:00Z');

function clock() {
  let now = START;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

const iso = (ms: number) => new Date(ms).toISOString();

function live(change: Partial<StatusLive> = {}): StatusLive {
  return {
    version: '1.0.0',
    mode: 'embedded',
    phase: 'running',
    startedAt: START,
    project: { id: '1', name: 'Bot' },
    cluster: null,
    readiness: { ready: true, components: {} },
    stateDirectory: null,
    stats: { enabled: true },
    commands: { enabled: true, intervalMs: HOUR },
    votes: { enabled: true, polling: true, pending: 0, deadLetters: [], cursor: null },
    webhooks: { enabled: true, receiverUrl: null, publicUrl: null, secrets: { configured: 1, stored: 0, newestStoredAt: null }, deliveries: {} },
    actions: false,
    ...change,
  };
}

const vote = (key: string, road = 'webhook') => ({ key, userId: key.split(':')[0]!, platformId: null, road, createdAt: iso(START), user: { name: `user ${key}` } });

describe('status collector', () => {
  it('keeps the posted samples once each (v1 and v0 post the same), in time order, and marks each post', () => {
    const c = clock();
    const collector = createStatusCollector({ now: c.now });
    const sample = { timestamp: iso(START - 1000), serverCount: 10, shardCount: 1 };
    collector.posted({ target: 'v1', samples: [sample], nextPostAt: START + HOUR });
    collector.posted({ target: 'v0', samples: [sample], nextPostAt: START + HOUR });
    collector.posted({ target: 'v1_batch', samples: [{ timestamp: iso(START - 5000), serverCount: 9, shardCount: 1 }], afterFailures: 2 });
    const got = collector.collected();
    expect(got.samples.map((s) => s.servers)).toEqual([9, 10]);
    expect(got.posts.map((p) => [p.target, p.outcome])).toEqual([['v1', 'ok'], ['v0', 'ok'], ['v1_batch', 'retried']]);
    expect(got.nextPostAt).toBeNull();
  });

  it('a failure is marked with its error and retry, and counts as pending until the next success', () => {
    const c = clock();
    const collector = createStatusCollector({ now: c.now });
    collector.postFailed({ target: 'v1_batch', error: new Error('503'), pendingSamples: 4, retryAt: START + 30_000 });
    expect(collector.collected()).toMatchObject({ nextPostAt: START + 30_000, pendingSamples: 4, posts: [{ outcome: 'failed', error: '503', retryAt: START + 30_000 }] });
    collector.posted({ target: 'v1_batch', samples: [], nextPostAt: START + HOUR, afterFailures: 1 });
    expect(collector.collected()).toMatchObject({ nextPostAt: START + HOUR, pendingSamples: null });
  });

  it('keeps only the history window, and thins the oldest samples past the cap', () => {
    const c = clock();
    const collector = createStatusCollector({ now: c.now, historyMs: 24 * HOUR, maxSamples: 100 });
    for (let i = 0; i < 300; i += 1) {
      collector.posted({ target: 'v1', samples: [{ timestamp: iso(c.now()), serverCount: i, shardCount: 1 }] });
      c.advance(6 * 60_000);
    }
    const { samples, posts } = collector.collected();
    expect(samples.length).toBeLessThanOrEqual(100);
    expect(samples.at(-1)?.servers).toBe(299);
    // 300 posts 6 min apart span 30 h: only the last 24 h stay.
    expect(posts).toHaveLength(240);
    expect(samples[0]!.at).toBeGreaterThanOrEqual(c.now() - 24 * HOUR);
    expect(thinOldest([1, 2, 3, 4, 5, 6, 7, 8], 6)).toEqual([1, 3, 5, 6, 7, 8]);
  });

  it('lists the newest votes with each hook outcome and latency; counts votes per hour by road', () => {
    const c = clock();
    const collector = createStatusCollector({ now: c.now, recentVotes: 2 });
    collector.voteReceived(vote('1:1'));
    collector.hookRan({ key: '1:1', hook: 'shop', attempt: 1, result: 'error', durationMs: 30, error: 'down' });
    collector.hookRan({ key: '1:1', hook: 'shop', attempt: 2, result: 'ok', durationMs: 12 });
    collector.hookRan({ key: '1:1', hook: 'vote-event', attempt: 1, result: 'dead_letter', durationMs: 1, error: 'threw' });
    collector.hookRan({ key: 'unknown:1', hook: 'shop', attempt: 1, result: 'ok', durationMs: 1 });
    c.advance(HOUR);
    collector.voteReceived(vote('2:1', 'poll'));
    collector.voteReceived(vote('3:1', 'poll'));
    const got = collector.collected();
    expect(got.votes.map((v) => v.key)).toEqual(['3:1', '2:1']);
    expect(got.votes.find((v) => v.key === '1:1')).toBeUndefined();
    expect(got.votesPerHour).toEqual([
      { hour: START, poll: 0, webhook: 1 },
      { hour: START + HOUR, poll: 2, webhook: 0 },
    ]);
    const one = createStatusCollector({ now: c.now });
    one.voteReceived(vote('1:1'));
    one.hookRan({ key: '1:1', hook: 'shop', attempt: 2, result: 'ok', durationMs: 12 });
    one.hookRan({ key: '1:1', hook: 'vote-event', attempt: 1, result: 'dead_letter', durationMs: 1, error: 'threw' });
    expect(one.collected().votes[0]?.hooks).toEqual([
      { hook: 'shop', outcome: 'ok', attempts: 2, latencyMs: 12, error: null },
      { hook: 'vote-event', outcome: 'dead_letter', attempts: 1, latencyMs: 1, error: 'threw' },
    ]);
  });

  it('deliveries of the last hour: the counters now less the reading of an hour ago (since the start when younger)', () => {
    const c = clock();
    const collector = createStatusCollector({ now: c.now });
    collector.deliveries({ accepted: 100, bad_signature: 5 });
    const young = buildStatusDocument(collector.collected(), live({ webhooks: { ...live().webhooks, deliveries: { accepted: 103, bad_signature: 5 } } }), c.now(), 24 * HOUR);
    expect(young.webhooks).toMatchObject({ lastHour: { accepted: 3, bad_signature: 0 }, since: iso(START) });
    for (let minute = 1; minute <= 90; minute += 1) {
      c.advance(60_000);
      collector.deliveries({ accepted: 100 + minute, bad_signature: 5 + (minute > 80 ? 1 : 0) });
    }
    const doc = buildStatusDocument(collector.collected(), live({ webhooks: { ...live().webhooks, deliveries: { accepted: 190, bad_signature: 15 } } }), c.now(), 24 * HOUR);
    expect(doc.webhooks.lastHour).toEqual({ accepted: 60, bad_signature: 10 });
    expect(doc.webhooks.since).toBe(iso(START + 30 * 60_000));
  });

  it('the cursor moved when its reading changes; the first reading says nothing', () => {
    const c = clock();
    const collector = createStatusCollector({ now: c.now });
    collector.cursor('a');
    c.advance(1000);
    collector.cursor('a');
    expect(collector.collected().cursorMovedAt).toBeNull();
    collector.cursor('b');
    expect(collector.collected().cursorMovedAt).toBe(START + 1000);
  });

  it('the document: every hour of the window, the next command check, at most 100 dead letters listed', () => {
    const c = clock();
    const collector = createStatusCollector({ now: c.now });
    collector.commandsSynced({ count: 2, skipped: true, hash: 'h', reason: 'start', diff: { added: [], removed: [], changed: [{ key: 'ping' }] } });
    const letters = Array.from({ length: 150 }, (_, i) => ({ key: `${i}:1`, hook: 'shop', userId: String(i), attempts: 1, error: 'x', failedAt: iso(START) }));
    const doc = buildStatusDocument(collector.collected(), live({ votes: { ...live().votes, deadLetters: letters } }), c.now(), 24 * HOUR);
    expect(doc.version).toBe(1);
    expect(doc.votes.perHour).toHaveLength(24);
    expect(doc.votes.perHour.at(-1)?.hour).toBe(iso(START));
    expect(doc.commands.nextCheckAt).toBe(iso(START + HOUR));
    expect(doc.commands.lastSync).toMatchObject({ changed: ['ping'], skipped: true });
    expect(doc.votes.deadLetters).toHaveLength(100);
    expect(doc.votes.deadLetterCount).toBe(150);
    expect(doc.agent.uptimeMs).toBe(0);
  });

  it('withoutSecrets masks every secret in every string, however deep', () => {
    const value = { a: 'token abc.def.ghi here', b: [{ c: 'whs_secret' }], n: 3, z: null };
    expect(withoutSecrets(value, ['abc.def.ghi', 'whs_secret', ''])).toEqual({ a: 'token ******** here', b: [{ c: '********' }], n: 3, z: null });
  });
});
