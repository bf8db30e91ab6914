/**
 * The status page's cost with its history full: building /status.json's document, rendering the
 * page, and what the collector does per event (it hears every vote and every hook call, so at
 * thousands of votes a second it must stay cheap).
 *
 * Run:  npm run bench -- bench/status.bench.ts      (same as: npx vitest bench --run bench/status.bench.ts)
 *
 * vitest prints its own table (operations per second); at the end this file prints a Markdown
 * table with the time per operation and the size of what is sent.
 */
import { afterAll, bench, describe } from 'vitest';
import { buildStatusDocument, type StatusLive } from '../src/status/build.js';
import { createStatusCollector } from '../src/status/collector.js';
import { renderStatusPage } from '../src/status/page.js';
import { statusView } from '../src/status/view-model.js';

const HOUR = 3_600_000;
const START = Date.parse('2026-03-04T12:00:00Z');
let now = START;
const collector = createStatusCollector({ now: () => now });

// A full day: a batch post every 30 min with 6 samples each (patch posts every 30 s would be
// more: the collector thins past 4,000 samples), a vote a minute with two hooks.
for (let minute = 0; minute < 24 * 60; minute += 1) {
  now = START + minute * 60_000;
  if (minute % 30 === 0) {
    const samples = Array.from({ length: 6 }, (_, i) => ({ timestamp: new Date(now - (5 - i) * 300_000).toISOString(), serverCount: 1_000 + minute + i, shardCount: 3 }));
    collector.posted({ target: 'v1_batch', samples, nextPostAt: now + 30 * 60_000 });
    collector.posted({ target: 'v0', samples: samples.slice(-1) });
  }
  const key = `${100_000 + minute}:${now}`;
  collector.voteReceived({ key, userId: String(100_000 + minute), platformId: null, road: minute % 2 ? 'poll' : 'webhook', createdAt: new Date(now).toISOString(), user: { name: `voter ${minute}` } });
  collector.hookRan({ key, hook: 'shop', attempt: 1, result: 'ok', durationMs: 12 });
  collector.hookRan({ key, hook: 'vote-event', attempt: 1, result: 'ok', durationMs: 1 });
  collector.deliveries({ accepted: minute, duplicate: minute >> 1 });
}

const live: StatusLive = {
  version: '0.1.0',
  mode: 'daemon',
  phase: 'running',
  startedAt: START,
  project: { id: '1000000000000000010', name: 'Demo Bot' },
  cluster: null,
  stateDirectory: null,
  readiness: { ready: true, components: Object.fromEntries(['service', 'store', 'stats', 'commands', 'votes', 'webhooks'].map((name) => [name, { ready: true, detail: `${name} is fine`, since: START }])) },
  stats: { enabled: true },
  commands: { enabled: true, intervalMs: HOUR },
  votes: {
    enabled: true,
    polling: true,
    pending: 0,
    deadLetters: Array.from({ length: 100 }, (_, i) => ({ key: `${i}:1`, hook: 'shop', userId: String(i), attempts: 6, error: 'POST http://127.0.0.1:3000/reward answered 503', failedAt: new Date(now).toISOString() })),
    cursor: { position: 'c'.repeat(40), newestVoteAt: new Date(now).toISOString() },
  },
  webhooks: { enabled: true, receiverUrl: 'http://127.0.0.1:9465/webhooks/listing', publicUrl: null, secrets: { configured: 1, stored: 1, newestStoredAt: START }, deliveries: { accepted: 1_500, duplicate: 700 } },
  actions: true,
};

const timings = new Map<string, { ms: number; runs: number }>();
function timed(name: string, fn: () => unknown) {
  return () => {
    const started = performance.now();
    fn();
    const t = timings.get(name) ?? { ms: 0, runs: 0 };
    t.ms += performance.now() - started;
    t.runs += 1;
    timings.set(name, t);
  };
}

const doc = buildStatusDocument(collector.collected(), live, now, 24 * HOUR);
const json = JSON.stringify(doc);
const page = renderStatusPage(statusView(doc));
let n = 0;

describe('status page', () => {
  bench('document (collected + live -> /status.json)', timed('document', () => buildStatusDocument(collector.collected(), live, now, 24 * HOUR)));
  bench('JSON.stringify of the document', timed('json', () => JSON.stringify(doc)));
  bench('page (view model + HTML)', timed('page', () => renderStatusPage(statusView(doc))));
  bench(
    'collector: one vote and two hook runs',
    timed('vote', () => {
      n += 1;
      const key = `${n}:1`;
      collector.voteReceived({ key, userId: String(n), platformId: null, road: 'webhook', createdAt: '2026-03-05T12:00:00.000Z' });
      collector.hookRan({ key, hook: 'shop', attempt: 1, result: 'ok', durationMs: 10 });
      collector.hookRan({ key, hook: 'vote-event', attempt: 1, result: 'ok', durationMs: 1 });
    }),
  );
});

afterAll(() => {
  const sizes: Record<string, string> = { document: `${doc.stats.samples.length} samples, ${doc.stats.posts.length} posts, ${doc.votes.recent.length} votes`, json: `${(json.length / 1024).toFixed(0)} KiB`, page: `${(page.length / 1024).toFixed(0)} KiB` };
  const lines = ['| operation | µs each | size |', '|---|---:|---|'];
  for (const [name, t] of timings) lines.push(`| ${name} | ${((t.ms / t.runs) * 1000).toFixed(1)} | ${sizes[name] ?? ''} |`);
  console.log(`\n${lines.join('\n')}\n`);
});
